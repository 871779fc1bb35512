"""Load on one HTTP server: REST retrieves and MCP ``retrieve_slice`` from many clients at once.

    python benchmarks/serve_load.py [--repo DIR] [--store DIR] [--in-place] [--seconds 60]
        [--clients 50] [--baseline 30] [--budget N] [--think S] [--phases repeating,distinct]

``kbc serve --transport http`` is started as a process of its own on a free loopback
port, with the ``KBC_*`` variables of the environment dropped (but those that say where
the embedding model and the index live), over kbc's own repository by default. The
store is built first when ``kbc status`` finds none, and served from a copy in a
temporary folder (every retrieve is logged, and a run would otherwise fill the store's
gap log with benchmark queries); ``--in-place`` serves the store itself. Measured in
one run, in this order:

- baseline: one client, sequential, REST ``POST /api/v1/retrieve`` (and MCP, for
  context) on ``--baseline`` distinct tasks (each ranked anew) and on one repeated task
  (answered from the server's slice cache after its first call);
- two load phases of ``--seconds`` each, ``--clients`` clients at once, half REST (an
  ``httpx.AsyncClient`` each), half MCP (the official client, one streamable HTTP session
  each, ``call_tool("retrieve_slice")`` over and over), no pause between requests unless
  ``--think`` (then a pause drawn uniformly from 0 to twice that, and a first request
  staggered over 0 to that, so the clients do not fall into step): *repeating* cycles a
  fixed set of tasks (each client from its own offset: mostly cache hits after the first
  round), *distinct* sends a task never sent before on every request (a base task, a
  context and a counter), so every request is ranked;
- per request: latency, and whether it failed (a status other than 200, a tool error, a
  slice over its budget, an exception); p50/p95/p99 and throughput for REST, MCP and both;
- the CPU time of the server and of the clients (this process) over each phase;
- the server's RSS (``/proc/PID/status``, its children included) every second of each
  phase: at its start and end, the maximum, and the medians of its first, middle and
  last 10 s;
- ``/metrics`` at the end, against the requests the clients counted; the server's
  standard error is searched for tracebacks.

Targets (the issue): zero errors; p95 within 5x the single-client p50 (each phase against
the baseline of the same kind: repeating against the repeated task, distinct against the
distinct tasks); RSS of the last 10 s within ``--rss-tolerance`` of the first 10 s.
The Markdown printed at the end is for ``benchmarks/RESULTS.md``; nothing is written.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import anyio
import httpx
from serve_load_clients import DistinctTasks, Plan, repeating
from serve_load_phases import Phase, baseline, run_phase
from serve_load_report import Run, report
from served import Server, ensure_built, rss_kib, running_server

HERE = Path(__file__).resolve().parent
# Variables kept from the environment: where the model and the index live (a build and
# its server must agree on them). Every other KBC_* variable is dropped.


async def measure_all(
    args: argparse.Namespace, server: Server
) -> tuple[dict[str, list[float]], list[Phase], float, str]:
    distinct = DistinctTasks()
    print("serve_load: baseline", file=sys.stderr, flush=True)
    base = await baseline(server.url, args.baseline, args.budget, distinct)
    rss_idle = rss_kib(server.process.pid)
    phases = []
    for name in args.phases.split(","):
        task: Callable[[int, int], str]
        if name == "repeating":
            task = repeating
        elif name == "distinct":
            task = distinct.of
        else:
            raise SystemExit(f"serve_load: no phase named {name!r} (repeating, distinct)")
        print(f"serve_load: {name}, {args.clients} clients, {args.seconds:g} s", file=sys.stderr, flush=True)
        plan = Plan(task=task, seconds=args.seconds, think=args.think, budget=args.budget)
        phases.append(await run_phase(name, server.url, server.process.pid, plan, args.clients))
        if server.process.poll() is not None:
            raise SystemExit(f"serve_load: the server died during {name}:\n{server.log.read_text()}")
    async with httpx.AsyncClient(timeout=60) as client:
        metrics = (await client.get(f"{server.url}/metrics")).text
    return base, phases, rss_idle, metrics


def client_counts(base: dict[str, list[float]], phases: list[Phase]) -> Counter[str]:
    """What the clients sent, in the metrics' terms: REST retrieves by status, tool calls by outcome."""
    counts: Counter[str] = Counter()
    rest = 1 + sum(len(v) for k, v in base.items() if k.startswith("rest"))  # and the warming request
    mcp = sum(len(v) for k, v in base.items() if k.startswith("mcp"))
    counts["http /api/v1/retrieve 200"] += rest
    counts["tool retrieve_slice ok"] += mcp
    for phase in phases:
        for sample in phase.tally.samples:
            if sample.way == "rest" and sample.ok:
                counts["http /api/v1/retrieve 200"] += 1
            elif sample.way == "mcp":
                counts[f"tool retrieve_slice {'ok' if sample.ok else 'error'}"] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--repo", type=Path, default=HERE.parent, help="default: the repository of this script"
    )
    parser.add_argument("--store", type=Path, help="the store folder (default: the repository's)")
    parser.add_argument(
        "--in-place",
        action="store_true",
        help="serve the store itself, not a copy (its gap log gets the benchmark's queries)",
    )
    parser.add_argument("--seconds", type=float, default=60.0, help="per load phase")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--baseline", type=int, default=30, help="requests per single-client baseline")
    parser.add_argument("--budget", type=int, help="token budget of every slice (default: the profile's)")
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="mean seconds a client waits between requests (uniform, 0 to twice this)",
    )
    parser.add_argument("--phases", default="repeating,distinct")
    parser.add_argument("--rss-tolerance", type=float, default=5.0, help="percent")
    args = parser.parse_args()
    if args.clients < 1 or args.seconds <= 0 or args.baseline < 2:
        parser.error("--clients ≥ 1, --seconds > 0 and --baseline ≥ 2")

    repo = args.repo.resolve()
    status = ensure_built(repo, args.store)
    with tempfile.TemporaryDirectory(prefix="kbc-serve-load-") as scratch:
        work = Path(scratch)
        store = Path(status["store"])
        if not args.in_place:
            copy = work / "store"
            shutil.copytree(store, copy, symlinks=True, ignore=shutil.ignore_patterns("lock"))
            store = copy
        load_before = Path("/proc/loadavg").read_text().split()[0]
        with running_server(repo, store, work) as server:
            base, phases, rss_idle, metrics = anyio.run(measure_all, args, server)
            server_exit = server.stop()
        load_after = Path("/proc/loadavg").read_text().split()[0]
        served = str(store) if args.in_place else f"a copy of {status['store']}"
        run = Run(
            args,
            status,
            served,
            base,
            phases,
            rss_idle,
            metrics,
            client_counts(base, phases),
            server_exit,
            server.log.read_text(),
            (load_before, load_after),
        )
        print(report(run), end="")
        if "Traceback" in run.server_log:
            print("\nServer output:\n\n```\n" + run.server_log[-6000:] + "```")


if __name__ == "__main__":
    main()
