"""Ten repositories served by one process: memory, retrieve latency in one repository and
across all under concurrent clients, and the time from a push webhook to the new commit
being served.

    python benchmarks/workspace.py [--work DIR] [--packages a,b,...] [--clients 20]
        [--seconds 30] [--hooks 3] [--max-open N] [--markdown]

Each package's source distribution (``pip download --no-binary :all:``; nothing is
committed) becomes a git repository, built lexically without an LLM (``kbc -c
index.embed_model=none build --no-llm``: the run measures serving, not embedding). The
last package is served by URL, from a local bare remote, so that a push webhook can be
measured. ``kbc serve --transport http`` runs as a process of its own with every
repository named by ``--repo`` and the store limits at their defaults. Measured, in order:

- RSS of the server (``/proc``, children included): started, after one retrieve in every
  repository (all stores open), after each phase, and the maximum seen;
- one client, sequential: REST retrieve in one repository (each request names one, in
  turn) and across all (no repository named): the baseline p50;
- ``--clients`` clients at once for ``--seconds`` each: the same two kinds of request, each
  task new (a base task and a counter: every request is ranked); p50/p95, throughput,
  failures (a status other than 200 or a slice over its budget);
- ``--hooks`` times: a commit pushed to the URL repository's remote, a signed push webhook,
  then ``GET /api/v1/repositories`` polled every 50 ms until it serves the new commit;
  while it refreshes, one client keeps retrieving from the other repositories (their
  latency during the refresh, against the baseline).

The Markdown printed at the end is for ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import itertools
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import zipfile
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from served import free_port, percentile, rss_kib, wait_healthy

PACKAGES = (
    "click",
    "flask",
    "requests",
    "httpx",
    "rich",
    "attrs",
    "jinja2",
    "werkzeug",
    "itsdangerous",
    "markupsafe",
)
MORE = (
    "idna",
    "certifi",
    "packaging",
    "pluggy",
    "iniconfig",
    "six",
    "toml",
    "colorama",
    "blinker",
    "tomli",
)  # --packages with these too: twenty repositories
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
KBC = [sys.executable, "-m", "kbc"]


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("KBC_")}


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args],
        capture_output=True,
        text=True,
        check=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "b",
            "GIT_AUTHOR_EMAIL": "b@example.org",
            "GIT_COMMITTER_NAME": "b",
            "GIT_COMMITTER_EMAIL": "b@example.org",
        },
    )
    return done.stdout


def source_of(package: str, downloads: Path, target: Path) -> None:
    """The package's source distribution unpacked into ``target`` (a git repository)."""
    if not any(downloads.glob(f"{package}-*")) and not any(downloads.glob(f"{package.replace('-', '_')}-*")):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--no-binary",
                ":all:",
                "-d",
                str(downloads),
                package,
            ],
            check=True,
        )
    prefixes = (package.lower() + "-", package.lower().replace("-", "_") + "-")
    archive = next(p for p in sorted(downloads.iterdir()) if p.name.lower().startswith(prefixes))
    unpacked = target.with_suffix(".unpacked")
    if archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as zipped:
            zipped.extractall(unpacked)
    else:
        with tarfile.open(archive) as tarred:
            tarred.extractall(unpacked, filter="data")
    (top,) = list(unpacked.iterdir())
    top.rename(target)
    unpacked.rmdir()
    git(target, "init", "-q", "-b", "main")
    git(target, "add", "-A")
    git(target, "commit", "-q", "-m", "source")


def prepare(work: Path, packages: list[str]) -> dict[str, Path]:
    downloads = work / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    repos = {}
    for package in packages:
        target = work / "repos" / package
        if not (target / ".git").is_dir():
            target.parent.mkdir(parents=True, exist_ok=True)
            source_of(package, downloads, target)
        if not (target / ".kbc" / "state.json").is_file():
            started = time.perf_counter()
            subprocess.run(
                [*KBC, "-c", "index.embed_model=none", "build", "--no-llm", str(target)],
                check=True,
                env=env(),
                stdout=subprocess.DEVNULL,
            )
            print(f"built {package} in {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
        repos[package] = target
    return repos


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
    began = time.perf_counter()
    try:
        reply = await client.post(f"{url}/api/v1/retrieve", json=body)
    except httpx.HTTPError as exc:
        return time.perf_counter() - began, type(exc).__name__
    seconds = time.perf_counter() - began
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

    started = time.monotonic()
    await asyncio.gather(*(client() for _ in range(clients)))
    wall = time.monotonic() - started
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
                began = time.perf_counter()
                http.post(
                    f"{url}/api/v1/retrieve",
                    json={
                        "task": f"{TASKS[i % len(TASKS)]} (during {n}.{i})",
                        "repository": others[i % len(others)],
                        "budget": budget,
                    },
                )
                during.append(time.perf_counter() - began)

    worker = threading.Thread(target=query_others)
    worker.start()
    began = time.perf_counter()
    reply = signed_push(url, remote, "main", after)
    assert reply.status_code == 202, reply.text
    until(lambda: listing(url)[hooked]["commit"] == after)
    took = time.perf_counter() - began
    stop.set()
    worker.join()
    return {
        "seconds": took,
        "during_p50": percentile(during, 50),
        "during_p95": percentile(during, 95),
        "during": len(during),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", type=Path, help="Where the sources, clones and stores go (kept).")
    parser.add_argument("--packages", default=",".join(PACKAGES))
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--baseline", type=int, default=20)
    parser.add_argument("--hooks", type=int, default=3)
    parser.add_argument("--budget", type=int, default=4000)
    parser.add_argument("--max-open", type=int, help="serve.max_open (default: kbc's).")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="kbc-workspace-"))
    packages = [p.strip() for p in args.packages.split(",") if p.strip()]
    repos = prepare(work, packages)
    hooked = packages[-1]
    remote = work / f"{hooked}.git"
    shutil.rmtree(remote, ignore_errors=True)
    shutil.rmtree(work / "data", ignore_errors=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(repos[hooked]), str(remote)], check=True)
    clone = work / f"{hooked}-clone"
    shutil.rmtree(clone, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", str(remote), str(clone)], check=True)
    server, url = serve(repos, hooked, remote, work, args.max_open)
    names = list(repos)
    results: dict[str, Any] = {"repositories": len(names), "clients": args.clients, "seconds": args.seconds}
    try:
        rss: dict[str, float] = {"started": rss_kib(server.pid)}
        began = time.perf_counter()
        first_use = {"task": "x", "repository": hooked}
        until(
            lambda: (
                listing(url)[hooked]["status"] == "ready"
                or httpx.post(f"{url}/api/v1/retrieve", json=first_use).status_code == 200
            )
        )
        results["first_build_of_url_repository_s"] = time.perf_counter() - began
        tasks = Tasks()
        for name in names:  # every store open
            reply = httpx.post(
                f"{url}/api/v1/retrieve",
                json={"task": tasks.next(), "repository": name, "budget": args.budget},
                timeout=120,
            )
            assert reply.status_code == 200, reply.text
        rss["all open"] = rss_kib(server.pid)
        base_one: list[float] = []
        base_all: list[float] = []
        with httpx.Client(timeout=120) as http:
            for i in range(args.baseline):
                began = time.perf_counter()
                http.post(
                    f"{url}/api/v1/retrieve",
                    json={"task": tasks.next(), "budget": args.budget, "repository": names[i % len(names)]},
                )
                base_one.append(time.perf_counter() - began)
            for _ in range(args.baseline):
                began = time.perf_counter()
                http.post(f"{url}/api/v1/retrieve", json={"task": tasks.next(), "budget": args.budget})
                base_all.append(time.perf_counter() - began)
        results["baseline_one_p50"] = percentile(base_one, 50)
        results["baseline_all_p50"] = percentile(base_all, 50)
        results["one"] = asyncio.run(phase(url, names, args.clients, args.seconds, args.budget, tasks))
        rss["after one-repository phase"] = rss_kib(server.pid)
        results["all"] = asyncio.run(phase(url, None, args.clients, args.seconds, args.budget, tasks))
        rss["after across-all phase"] = rss_kib(server.pid)
        results["hooks"] = [
            hook_round(url, clone, remote, hooked, [n for n in names if n != hooked], n + 1, args.budget)
            for n in range(args.hooks)
        ]
        rss["end"] = rss_kib(server.pid)
        results["rss_mib"] = {k: round(v / 1024, 1) for k, v in rss.items()}
        results["open"] = sum(1 for r in listing(url).values() if r["open"])
        results["max_open"] = args.max_open or "default"
        results["file_descriptors"] = len(list(Path(f"/proc/{server.pid}/fd").iterdir()))
    finally:
        server.terminate()
        server.wait(timeout=60)
    log = (work / "server.log").read_text(errors="replace")
    results["tracebacks"] = log.count("Traceback")
    print(json.dumps(results, indent=1))
    if args.markdown:
        print(markdown(results))


def markdown(r: dict[str, Any]) -> str:
    def ms(s: float) -> str:
        return f"{s * 1000:.0f}"

    hooks = r["hooks"]
    lines = [
        f"{r['repositories']} repositories, one `kbc serve --transport http` process, lexical stores, "
        f"{r['clients']} clients for {r['seconds']:.0f} s per phase, each request a new task.",
        "",
        "| | baseline p50 (1 client) | p50 | p95 | p95 / baseline p50 | requests/s | failures |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, label, base in (
        ("one", "retrieve in one repository", "baseline_one_p50"),
        ("all", "retrieve across all", "baseline_all_p50"),
    ):
        p = r[key]
        lines.append(
            f"| {label} | {ms(r[base])} ms | {ms(p['p50'])} ms | {ms(p['p95'])} ms | "
            f"{p['p95'] / r[base]:.1f}x | {p['rps']:.1f} | {p['failures']} of {p['requests']} |"
        )
    lines += [
        "",
        "| RSS | " + " | ".join(r["rss_mib"]) + " |",
        "|---" * (len(r["rss_mib"]) + 1) + "|",
        "| MiB | " + " | ".join(str(v) for v in r["rss_mib"].values()) + " |",
        "",
    ]
    lines.append(
        "Push webhook to new commit served (refresh of the URL repository): "
        + ", ".join(f"{h['seconds']:.2f} s" for h in hooks)
        + "; retrieves in the other repositories meanwhile: p50 "
        + ", ".join(f"{ms(h['during_p50'])}" for h in hooks)
        + " ms, p95 "
        + ", ".join(f"{ms(h['during_p95'])}" for h in hooks)
        + " ms "
        f"(baseline p50 {ms(r['baseline_one_p50'])} ms). First build of the URL repository "
        f"on first use: {r['first_build_of_url_repository_s']:.1f} s. Stores open at the end: "
        f"{r['open']} (serve.max_open {r['max_open']}); file descriptors of the server: "
        f"{r['file_descriptors']}. Tracebacks in the server's log: {r['tracebacks']}."
    )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
