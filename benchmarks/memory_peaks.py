"""How much memory a process of kbc holds, for ``benchmarks/memory.py``: a watch polling a
process tree's RSS from ``/proc`` every :data:`TICK` seconds (the peak of the sum and of one
process), a command run to its end under that watch, the environment that runs a given source
tree of kbc, and this process's own ``/proc/self/status`` figures.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from served import rss_parts
from timing import clock

TICK = 0.05  # seconds between reads of /proc


class Watch:
    """Polls a process tree's RSS until stopped: the peak of the sum and of one process."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.tree_peak = 0
        self.one_peak = 0
        self.last = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            time.sleep(TICK)

    def sample(self) -> int:
        parts = rss_parts(self.pid)
        if parts:
            self.last = sum(parts)
            self.tree_peak = max(self.tree_peak, self.last)
            self.one_peak = max(self.one_peak, max(parts))
        return self.last

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


NEUTRAL = Path(tempfile.gettempdir())  # the children's working folder: never a checkout of kbc


def env_for(code: Path, cache: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KBC_")}
    env["PYTHONPATH"] = str(code)
    env["KBC_CONFIG"] = ""
    if cache is not None:
        env["KBC_CACHE_DIR"] = str(cache)
    return env


def run_watched(command: list[str], env: dict[str, str], cwd: Path = NEUTRAL) -> dict[str, Any]:
    """Run ``command`` to its end: wall seconds, the tree's peak and the largest process's."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        with clock() as sample:
            child = subprocess.Popen(command, stdout=out, stderr=err, env=env, cwd=cwd, text=True)
            watch = Watch(child.pid)
            _, status, usage = os.wait4(child.pid, 0)
            watch.stop()
        seconds = sample.wall
        err.seek(0)
        stderr = err.read()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{' '.join(command)} exited {code}:\n{stderr[-2000:]}")
    one = max(usage.ru_maxrss, watch.one_peak)
    return {"wall": round(seconds, 1), "one_mb": round(one / 1024), "tree_mb": round(watch.tree_peak / 1024)}


def kbc(*args: str) -> list[str]:
    return [sys.executable, "-m", "kbc", *args]


def status_mib(field: str) -> float:
    match = re.search(rf"^{field}:\s+(\d+) kB", Path("/proc/self/status").read_text(), re.M)
    return int(match.group(1)) / 1024 if match else float("nan")


def mib(kib: int) -> float:
    return round(kib / 1024, 1)
