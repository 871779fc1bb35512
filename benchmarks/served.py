"""A kbc server for a measurement (``serve_load``, ``memory``, ``workspace``): started on a
free loopback port with a clean environment, waited for until its health check answers,
stopped gracefully; the CPU time and resident memory of it and its children read from
``/proc``; and the percentiles of what was timed."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

KEPT_ENV = ("KBC_CACHE_DIR", "KBC_DATA_DIR", "KBC_EMBED_MODEL", "KBC_CHROMA_URL")


def percentile(values: list[float], q: int) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def kbc_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "kbc", *args]


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("KBC_") or k in KEPT_ENV}


def store_args(store: Path | None) -> list[str]:
    return ["--store", str(store)] if store is not None else []


def status_of(repo: Path, store: Path | None) -> dict[str, Any] | None:
    """``kbc status --format json``, or None when there is no build to serve."""
    done = subprocess.run(
        kbc_command("status", "--repo", str(repo), *store_args(store), "--format", "json"),
        capture_output=True,
        text=True,
        env=clean_env(),
    )
    if done.returncode != 0:
        return None
    data: dict[str, Any] = json.loads(done.stdout)
    return data if data.get("built") else None


def ensure_built(repo: Path, store: Path | None) -> dict[str, Any]:
    status = status_of(repo, store)
    if status is None:
        print(f"serve_load: no build of {repo}; kbc build", file=sys.stderr, flush=True)
        subprocess.run(
            kbc_command("build", str(repo), *store_args(store)),
            check=True,
            env=clean_env(),
            stdout=sys.stderr,
        )
        status = status_of(repo, store)
        if status is None:
            raise SystemExit(f"serve_load: kbc build {repo} left no build that kbc status reads")
    return status


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    url: str
    log: Path

    def stop(self) -> int:
        """SIGTERM (a graceful shutdown), then SIGKILL if it has not ended in 20 s."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return int(self.process.returncode)


@contextmanager
def running_server(repo: Path, store: Path, work: Path) -> Iterator[Server]:
    port = free_port()
    log = work / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            kbc_command(
                "serve",
                "--transport",
                "http",
                "--repo",
                str(repo),
                "--store",
                str(store),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=clean_env(),
        )
    server = Server(process, f"http://127.0.0.1:{port}", log)
    try:
        wait_healthy(process, server.url, 120, log)
        yield server
    finally:
        server.stop()


def descendants(pid: int) -> list[int]:
    found = [pid]
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            children = task.read_text().split()
        except OSError:
            continue
        for child in children:
            found.extend(descendants(int(child)))
    return found


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of the process and its children so far."""
    total = 0
    for each in descendants(pid):
        try:
            fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return total / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


def wait_healthy(server: subprocess.Popen[bytes], url: str, seconds: float, log: Path) -> None:
    """Return once ``url`` answers its health check; exit with the end of ``log`` if the server
    ends or does not answer within ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if httpx.get(f"{url}/api/v1/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(log.read_text()[-3000:])
        time.sleep(0.1)


def rss_parts(pid: int) -> list[int]:
    """VmRSS in KiB of the process and each descendant."""
    found = []
    for each in descendants(pid):
        try:
            status = Path(f"/proc/{each}/status").read_text()
        except OSError:
            continue
        match = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
        if match:
            found.append(int(match.group(1)))
    return found


def rss_kib(pid: int) -> float:
    """VmRSS of the process and its children, in KiB (NaN once it is gone)."""
    total = sum(rss_parts(pid))
    return float(total) if total else float("nan")
