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
import json
import shutil
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from served import percentile, rss_kib
from timing import clock, timed

# MORE and TASKS stay importable from here: memory.py takes them (and PACKAGES, prepare) from workspace.
from workspace_corpus import MORE as MORE
from workspace_corpus import PACKAGES, prepare
from workspace_load import TASKS as TASKS
from workspace_load import Tasks, hook_round, listing, phase, serve, until


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
        first_use = {"task": "x", "repository": hooked}
        with clock() as first_built:
            until(
                lambda: (
                    listing(url)[hooked]["status"] == "ready"
                    or httpx.post(f"{url}/api/v1/retrieve", json=first_use).status_code == 200
                )
            )
        results["first_build_of_url_repository_s"] = first_built.wall
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
                body = {"task": tasks.next(), "budget": args.budget, "repository": names[i % len(names)]}
                base_one.append(timed(partial(http.post, f"{url}/api/v1/retrieve", json=body)).wall)
            for _ in range(args.baseline):
                body = {"task": tasks.next(), "budget": args.budget}
                base_all.append(timed(partial(http.post, f"{url}/api/v1/retrieve", json=body)).wall)
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
