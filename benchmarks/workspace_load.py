"""The server of the workspace benchmark and the load on it: ``kbc serve`` over every
repository (the last by URL, from its bare remote), the retrieves of one client or of many at
once, and the push webhook rounds timed while another client keeps retrieving.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from served import free_port, percentile, wait_healthy
from timing import clock
from workspace_corpus import KBC, env, git

TASKS = (
    "add a retry option to the client and test it",
    "parse a new command line option",
    "render a template with a custom filter",
    "sign a value and check its signature",
    "escape markup in user input",
    "validate a field of a class and report the error",
    "stream a large response body",
    "print a table with colours to the terminal",
    "route a request to a view and handle errors",
    "read the configuration from the environment",
    "close the connection pool when the session ends",
    "format a traceback for the user",
)
SECRET = "a-webhook-secret-for-the-benchmark"


def serve(
    repos: dict[str, Path], hooked: str, remote: Path, work: Path, max_open: int | None
) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    args = [arg for name, path in repos.items() if name != hooked for arg in ("--repo", f"{name}={path}")]
    args += ["--repo", f"{hooked}=file://{remote}"]
    log = (work / "server.log").open("wb")
    server = subprocess.Popen(
        [*KBC, "-c", "index.embed_model=none", "serve", "--transport", "http", "--port", str(port), *args],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env={
            **env(),
            "KBC_WEBHOOK_SECRET": SECRET,
            "KBC_DATA_DIR": str(work / "data"),
            "KBC_FETCH_SECONDS": "0",
            "KBC_CONFIG": "",
            **({"KBC_MAX_OPEN": str(max_open)} if max_open else {}),
        },
    )
    url = f"http://127.0.0.1:{port}"
    wait_healthy(server, url, 120, work / "server.log")
    return server, url


def listing(url: str) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in httpx.get(f"{url}/api/v1/repositories", timeout=30).json()}


def until(check: Any, seconds: float = 600, step: float = 0.05) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(step)
    raise SystemExit("timed out")


class Tasks:
    def __init__(self) -> None:
        self._counter = itertools.count(1)

    def next(self) -> str:
        n = next(self._counter)
        return f"{TASKS[n % len(TASKS)]} (case {n})"


async def one_request(
    client: httpx.AsyncClient, url: str, task: str, repository: str | None, budget: int
) -> tuple[float, str | None]:
    body: dict[str, Any] = {"task": task, "budget": budget}
    if repository:
        body["repository"] = repository
    failed: str | None = None
    with clock() as sample:
        try:
            reply = await client.post(f"{url}/api/v1/retrieve", json=body)
        except httpx.HTTPError as exc:
            failed = type(exc).__name__
    seconds = sample.wall
    if failed is not None:
        return seconds, failed
    if reply.status_code != 200:
        return seconds, f"status {reply.status_code}"
    if reply.json()["tokens"] > budget:
        return seconds, "over budget"
    return seconds, None


async def phase(
    url: str, names: list[str] | None, clients: int, seconds: float, budget: int, tasks: Tasks
) -> dict[str, Any]:
    """``clients`` clients for ``seconds``; ``names``: each request names one in turn (None:
    across all)."""
    samples: list[float] = []
    failures: list[str] = []
    turn = itertools.count()
    end = time.monotonic() + seconds

    async def client() -> None:
        async with httpx.AsyncClient(timeout=120) as http:
            while time.monotonic() < end:
                name = names[next(turn) % len(names)] if names else None
                took, problem = await one_request(http, url, tasks.next(), name, budget)
                samples.append(took)
                if problem:
                    failures.append(problem)

    with clock() as together:
        await asyncio.gather(*(client() for _ in range(clients)))
    wall = together.wall
    return {
        "requests": len(samples),
        "failures": len(failures),
        "kinds": sorted(set(failures)),
        "p50": percentile(samples, 50),
        "p95": percentile(samples, 95),
        "rps": len(samples) / wall,
    }


def signed_push(url: str, remote: Path, branch: str, after: str) -> httpx.Response:
    body = json.dumps(
        {"ref": f"refs/heads/{branch}", "after": after, "repository": {"clone_url": f"file://{remote}"}}
    ).encode()
    signature = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    return httpx.post(
        f"{url}/api/v1/hooks/push",
        content=body,
        timeout=30,
        headers={
            "X-GitHub-Event": "push",
            "X-Hub-Signature-256": signature,
            "Content-Type": "application/json",
        },
    )


def hook_round(
    url: str, clone: Path, remote: Path, hooked: str, others: list[str], n: int, budget: int
) -> dict[str, Any]:
    note = clone / f"CHANGES-{n}.md"
    note.write_text(f"# Change {n}\n\nA note pushed to measure the webhook ({n}).\n", encoding="utf-8")
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", f"change {n}")
    git(clone, "push", "-q", "origin", "HEAD:main")
    after = git(clone, "rev-parse", "HEAD").strip()
    during: list[float] = []
    stop = threading.Event()

    def query_others() -> None:
        with httpx.Client(timeout=120) as http:
            for i in itertools.count():
                if stop.is_set():
                    return
                with clock() as sample:
                    http.post(
                        f"{url}/api/v1/retrieve",
                        json={
                            "task": f"{TASKS[i % len(TASKS)]} (during {n}.{i})",
                            "repository": others[i % len(others)],
                            "budget": budget,
                        },
                    )
                during.append(sample.wall)

    worker = threading.Thread(target=query_others)
    worker.start()
    with clock() as pushed:
        reply = signed_push(url, remote, "main", after)
        assert reply.status_code == 202, reply.text
        until(lambda: listing(url)[hooked]["commit"] == after)
    took = pushed.wall
    stop.set()
    worker.join()
    return {
        "seconds": took,
        "during_p50": percentile(during, 50),
        "during_p95": percentile(during, 95),
        "during": len(during),
    }
