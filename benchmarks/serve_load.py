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
import itertools
import os
import platform
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import httpx
from served import (
    Server,
    cpu_seconds,
    ensure_built,
    own_cpu_seconds,
    percentile,
    rss_kib,
    running_server,
)

HERE = Path(__file__).resolve().parent
USE_CASE = "implementation"
# Variables kept from the environment: where the model and the index live (a build and
# its server must agree on them). Every other KBC_* variable is dropped.
WINDOW = 10.0  # seconds of RSS samples whose median opens and closes a phase

# Tasks an agent working on kbc itself might start with.
TASKS = (
    "how does retrieval stay within the token budget?",
    "add a REST endpoint for drift",
    "where are credentials redacted before indexing",
    "fix the MCP retrieve_slice tool returning an error for an unknown use case",
    "make kbc refresh re-embed only the chunks whose text changed",
    "add a --format json option to kbc gaps",
    "why does the server follow a build completed by another process",
    "change how code is cut into chunks at function definitions",
    "add a Prometheus counter for slice cache hits",
    "how are knowledge gaps logged and pruned after retention_days",
    "support a bearer token for the HTTP server beyond loopback",
    "the lexical index tokenizer splits camelCase and snake_case identifiers",
    "add a new retrieval profile for security review",
    "how does the architecture view find the layers of a package",
    "make get_file refuse paths outside the repository",
    "where is the embedding model loaded and what happens when fastembed is missing",
    "speed up the facts pass with more worker processes",
    "how does the store lock keep two builds from writing at once",
    "add a business rules view from validation code",
    "traceback: KeyError in the call graph when a method is defined twice",
    "where does kbc ask check citations against the retrieved sources",
    "add an option to exclude vendored folders from discovery",
    "how are views written with an LLM and cached by their facts",
    "report_usage with an empty list marks the query as a gap",
)
# Appended to a base task (with a counter) to make every request of the distinct phase new.
CONTEXTS = (
    "in the CLI",
    "for the REST API",
    "over MCP",
    "with a test",
    "without breaking the UI",
    "on a large monorepo",
    "keeping the store format",
    "and document it",
    "for Python 3.11",
    "when no LLM is configured",
    "with embeddings off",
    "in the settings",
)


def ms(seconds: float) -> str:
    return "–" if seconds != seconds else f"{seconds * 1000:.1f}"


def mib(kib: float) -> str:
    return "–" if kib != kib else f"{kib / 1024:.1f}"


def change(first: float, last: float) -> str:
    return f"{(last / first - 1) * 100:+.1f}%"


def yes(holds: bool) -> str:
    return "yes" if holds else "NO"


class DistinctTasks:
    """Tasks never sent before in this run: a base task, a context and a counter."""

    def __init__(self) -> None:
        self._counter = itertools.count(1)

    def next(self) -> str:
        n = next(self._counter)
        base = TASKS[n % len(TASKS)]
        context = CONTEXTS[(n // len(TASKS)) % len(CONTEXTS)]
        return f"{base} {context} (case {n})"


# -- the clients --------------------------------------------------------------------------


@dataclass
class Sample:
    way: str  # "rest" or "mcp"
    seconds: float
    ok: bool


@dataclass
class Tally:
    samples: list[Sample] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)
    sessions: int = 0  # MCP sessions opened
    last: float = 0.0  # when the last request counted ended

    def record(self, way: str, began: float, ended: float, problem: str | None) -> None:
        self.samples.append(Sample(way, ended - began, problem is None))
        self.last = max(self.last, ended)
        if problem is not None:
            self.failures[f"{way}: {problem[:300]}"] += 1


def _slice_problem(data: Any) -> str | None:
    if not isinstance(data, dict) or "tokens" not in data or "items" not in data:
        return f"not a slice: {str(data)[:200]}"
    if int(data["tokens"]) > int(data["budget"]):
        return f"{data['tokens']} tokens over a budget of {data['budget']}"
    return None


def _arguments(task: str, budget: int | None) -> dict[str, Any]:
    return {"task": task, "use_case": USE_CASE, "budget": budget}


async def rest_retrieve(client: httpx.AsyncClient, url: str, task: str, budget: int | None) -> str | None:
    response = await client.post(f"{url}/api/v1/retrieve", json=_arguments(task, budget))
    if response.status_code != 200:
        return f"HTTP {response.status_code}: {response.text[:200]}"
    return _slice_problem(response.json())


async def mcp_retrieve(session: Any, task: str, budget: int | None) -> str | None:
    from mcp.types import CallToolResult

    found = await session.call_tool("retrieve_slice", _arguments(task, budget))
    if not isinstance(found, CallToolResult):
        return f"not a tool result: {type(found).__name__}"
    if found.is_error:
        text = " ".join(getattr(part, "text", "") for part in found.content)
        return f"tool error: {text[:200]}"
    return _slice_problem(found.structured_content)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    return f"{type(exc).__name__}: {exc}"


@dataclass
class Plan:
    """When a phase starts and stops, and which task a client sends next."""

    task: Callable[[int, int], str]  # (client, request) -> task
    seconds: float
    think: float
    budget: int | None
    ready: int = 0
    start: anyio.Event = field(default_factory=anyio.Event)
    started: float = 0.0

    @property
    def deadline(self) -> float:
        return self.started + self.seconds


async def _think(plan: Plan, rng: random.Random, first: bool = False) -> None:
    """A client's pause (never past the end of the phase)."""
    if plan.think:
        pause = rng.uniform(0, plan.think if first else 2 * plan.think)
        await anyio.sleep(min(pause, max(0.0, plan.deadline - time.perf_counter())))


async def _loop(
    way: str,
    index: int,
    plan: Plan,
    tally: Tally,
    requests: Iterator[int],
    rng: random.Random,
    send: Callable[[str], Awaitable[str | None]],
) -> None:
    """Send until the deadline (a request started before it is counted). An exception is an
    error of its request; it ends the loop when ``way`` is MCP (the session may be gone)."""
    while time.perf_counter() < plan.deadline:
        task = plan.task(index, next(requests))
        began = time.perf_counter()
        try:
            problem = await send(task)
        except Exception as exc:
            tally.record(way, began, time.perf_counter(), _describe(exc))
            if way == "mcp":
                raise
            continue
        tally.record(way, began, time.perf_counter(), problem)
        await _think(plan, rng)


async def rest_client(url: str, index: int, plan: Plan, tally: Tally) -> None:
    async with httpx.AsyncClient(timeout=httpx.Timeout(300.0)) as client:
        plan.ready += 1
        await plan.start.wait()
        rng = random.Random(index)
        await _think(plan, rng, first=True)
        await _loop(
            "rest",
            index,
            plan,
            tally,
            itertools.count(),
            rng,
            lambda t: rest_retrieve(client, url, t, plan.budget),
        )


async def mcp_client(url: str, index: int, plan: Plan, tally: Tally) -> None:
    """One session for the phase; a new one if a request fails with an exception."""
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    requests = itertools.count()
    rng = random.Random(index)
    waited = False
    while not waited or time.perf_counter() < plan.deadline:
        began = time.perf_counter()
        try:
            async with (
                streamable_http_client(f"{url}/mcp") as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                tally.sessions += 1
                if not waited:
                    waited = True
                    plan.ready += 1
                    await plan.start.wait()
                    await _think(plan, rng, first=True)
                await _loop(
                    "mcp", index, plan, tally, requests, rng, lambda t: mcp_retrieve(session, t, plan.budget)
                )
            return
        except Exception as exc:
            if not waited:  # the session could not be opened: an error, and the phase goes on
                tally.record("mcp", began, time.perf_counter(), "opening the session: " + _describe(exc))
                waited = True
                plan.ready += 1
                await plan.start.wait()
            elif time.perf_counter() >= plan.deadline:
                tally.failures[f"mcp: closing the session: {_describe(exc)[:300]}"] += 1


@dataclass
class Phase:
    name: str
    tally: Tally
    elapsed: float
    rss: list[tuple[float, float]]  # (seconds since the start, KiB)
    clients: int
    cpu: tuple[float, float, float]  # server CPU s, client (this process) CPU s, wall s, over the phase


async def run_phase(name: str, url: str, pid: int, plan: Plan, clients: int) -> Phase:
    tally = Tally()
    rss: list[tuple[float, float]] = []
    rest_clients = clients // 2 + clients % 2
    finished = anyio.Event()
    cpu_before: list[float] = []
    cpu_after: list[float] = []

    async def sample_rss() -> None:
        await plan.start.wait()
        while not finished.is_set():
            rss.append((time.perf_counter() - plan.started, rss_kib(pid)))
            with anyio.move_on_after(1.0):
                await finished.wait()
        rss.append((time.perf_counter() - plan.started, rss_kib(pid)))

    async def clients_and_then_stop() -> None:
        async with anyio.create_task_group() as group:
            for index in range(clients):
                if index < rest_clients:
                    group.start_soon(rest_client, url, index, plan, tally)
                else:
                    group.start_soon(mcp_client, url, index, plan, tally)
            with anyio.move_on_after(120):
                while plan.ready < clients:
                    await anyio.sleep(0.05)
            plan.started = time.perf_counter()
            cpu_before.extend((cpu_seconds(pid), own_cpu_seconds()))
            plan.start.set()
        cpu_after.extend((cpu_seconds(pid), own_cpu_seconds(), time.perf_counter() - plan.started))
        finished.set()

    async with anyio.create_task_group() as group:
        group.start_soon(sample_rss)
        group.start_soon(clients_and_then_stop)
    cpu = (cpu_after[0] - cpu_before[0], cpu_after[1] - cpu_before[1], cpu_after[2])
    return Phase(name, tally, max(plan.seconds, tally.last - plan.started), rss, clients, cpu)


async def baseline(
    url: str, count: int, budget: int | None, distinct: DistinctTasks
) -> dict[str, list[float]]:
    """One client, one request at a time: REST and MCP, on distinct tasks and on a repeated one."""
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    out: dict[str, list[float]] = {}

    async def measure(key: str, send: Callable[[str], Awaitable[str | None]], tasks: list[str]) -> None:
        times = []
        for task in tasks:
            began = time.perf_counter()
            problem = await send(task)
            times.append(time.perf_counter() - began)
            if problem is not None:
                raise SystemExit(f"serve_load: the baseline failed ({key}): {problem}")
        out[key] = times

    async with httpx.AsyncClient(timeout=httpx.Timeout(300.0)) as client:

        def rest(task: str) -> Awaitable[str | None]:
            return rest_retrieve(client, url, task, budget)

        await rest(TASKS[0])  # a first request opens the connection (and warms the index)
        await measure("rest distinct", rest, [distinct.next() for _ in range(count)])
        await measure("rest repeated", rest, [TASKS[0]] * count)
    async with streamable_http_client(f"{url}/mcp") as (read, write), ClientSession(read, write) as session:
        await session.initialize()

        def mcp(task: str) -> Awaitable[str | None]:
            return mcp_retrieve(session, task, budget)

        await measure("mcp distinct", mcp, [distinct.next() for _ in range(count)])
        await measure("mcp repeated", mcp, [TASKS[0]] * count)
    return out


# -- metrics and the report ---------------------------------------------------------------


METRIC_LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$")
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def metric_sums(text: str, name: str, by: tuple[str, ...]) -> dict[tuple[str, ...], float]:
    sums: dict[tuple[str, ...], float] = {}
    for line in text.splitlines():
        match = METRIC_LINE.match(line)
        if not match or match.group(1) != name:
            continue
        labels = dict(LABEL.findall(match.group(2) or ""))
        key = tuple(labels.get(b, "") for b in by)
        sums[key] = sums.get(key, 0.0) + float(match.group(3))
    return sums


def series_marks(rss: list[tuple[float, float]], step: float) -> list[float]:
    """The first sample at or after each multiple of ``step`` seconds, and the last one."""
    chosen: list[int] = []
    due = 0.0
    for i, (at, _) in enumerate(rss):
        if at >= due:
            chosen.append(i)
            due += step * (1 + (at - due) // step)
    if rss and chosen[-1] != len(rss) - 1:
        chosen.append(len(rss) - 1)
    return [rss[i][1] for i in chosen]


def window_median(rss: list[tuple[float, float]], start: float, end: float) -> float:
    values = [kib for at, kib in rss if start <= at < end and kib == kib]
    return statistics.median(values) if values else float("nan")


@dataclass
class Run:
    args: argparse.Namespace
    status: dict[str, Any]
    store: str  # what was served, in words
    base: dict[str, list[float]]
    phases: list[Phase]
    rss_idle: float
    metrics: str
    client_counts: Counter[str]
    server_exit: int
    server_log: str
    load: tuple[str, str]


def git_commit(repo: Path) -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=repo, capture_output=True, text=True)
    if done.returncode != 0:
        return "unknown"
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo, capture_output=True, text=True
    ).stdout.strip()
    return done.stdout.strip() + (" (with uncommitted changes)" if dirty else "")


def report(run: Run) -> str:  # noqa: C901 - one report, a section per measured phase
    args = run.args
    lines: list[str] = []
    add = lines.append
    build = run.status.get("last_build", {})
    index = run.status.get("index", {})
    add(
        f"## Serving under load: {args.clients} clients, REST and MCP, on kbc's own repository"
        if args.repo.resolve() == HERE.parent
        else f"## Serving under load: {args.clients} clients, REST and MCP, on {args.repo.resolve().name}"
    )
    add("")
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    add(
        f"- date: {now}; machine: {os.cpu_count()} cores, {platform.machine()}, "
        f"Linux {platform.release()}, Python {platform.python_version()}; "
        f"load average (1 min) {run.load[0]} before, {run.load[1]} after (a shared machine)"
    )
    add(f"- command: `{' '.join(['python', 'benchmarks/serve_load.py', *map(shlex.quote, sys.argv[1:])])}`")
    add(
        f"- code: kbc at {git_commit(HERE.parent)}; store built at {str(build.get('commit', '?'))[:7]} "
        f"({build.get('finished', '?')}), {index.get('chunks', '?')} chunks, "
        f"retrieval {run.status.get('retrieval', '?')}; served from {run.store}"
    )
    think = f"{args.think:g} s on average (uniform 0–{2 * args.think:g} s)" if args.think else "none"
    add(
        f"- clients: {args.clients} ({args.clients // 2 + args.clients % 2} REST, {args.clients // 2} MCP), "
        f"{args.seconds:g} s per phase, think time {think}, use case {USE_CASE}, "
        f"budget {args.budget if args.budget is not None else 'the profile default'}"
    )
    add("")
    add("Single client, sequential (before the load):")
    add("")
    add("| request | n | p50 ms | p95 ms | max ms |")
    add("|---|---:|---:|---:|---:|")
    for key, times in run.base.items():
        add(
            f"| {key} | {len(times)} | {ms(statistics.median(times))} | {ms(percentile(times, 95))} "
            f"| {ms(max(times))} |"
        )
    add("")
    add("Under load (latency from request sent to answer read; the requests started before the phase's end):")
    add("")
    add("| phase | way | requests | errors | req/s | p50 ms | p95 ms | p99 ms | max ms |")
    add("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for phase in run.phases:
        for way in ("rest", "mcp", "all"):
            chosen = [s for s in phase.tally.samples if way == "all" or s.way == way]
            times = [s.seconds for s in chosen]
            errors = sum(not s.ok for s in chosen)
            quantiles = " | ".join(ms(percentile(times, q)) for q in (50, 95, 99))
            longest = ms(max(times, default=float("nan")))
            add(
                f"| {phase.name} | {way.upper() if way != 'all' else 'both'} | {len(chosen)} | {errors} "
                f"| {len(chosen) / phase.elapsed:.1f} | {quantiles} | {longest} |"
            )
    add("")
    add("CPU over each phase, in cores busy (the clients run on the same machine as the server):")
    add("")
    for phase in run.phases:
        server_cpu, client_cpu, wall = phase.cpu
        add(
            f"- {phase.name}: server {server_cpu / wall:.2f}, clients {client_cpu / wall:.2f} "
            f"({server_cpu:.0f} s and {client_cpu:.0f} s of CPU in {wall:.0f} s)"
        )
    add("")
    add(f"Server RSS, MiB (sampled every second; idle after the baseline: {mib(run.rss_idle)}):")
    add("")
    add(
        f"| phase | start | end | max | median first {WINDOW:g} s | median middle {WINDOW:g} s "
        f"| median last {WINDOW:g} s | growth first→last | growth middle→last |"
    )
    add("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    growths: list[tuple[str, float, float, float]] = []
    for phase in run.phases:
        rss = phase.rss
        if not rss:
            continue
        end = rss[-1][0]
        first = window_median(rss, 0.0, WINDOW)
        middle = window_median(rss, end / 2 - WINDOW / 2, end / 2 + WINDOW / 2)
        last = window_median(rss, end - WINDOW, end + 1.0)
        growths.append((phase.name, first, middle, last))
        add(
            f"| {phase.name} | {mib(rss[0][1])} | {mib(rss[-1][1])} | {mib(max(k for _, k in rss))} "
            f"| {mib(first)} | {mib(middle)} | {mib(last)} | {mib(last - first)} ({change(first, last)}) "
            f"| {mib(last - middle)} ({change(middle, last)}) |"
        )
    add("")
    for phase in run.phases:
        marks = series_marks(phase.rss, WINDOW)
        add(f"- {phase.name}, RSS every {WINDOW:g} s: {', '.join(mib(kib) for kib in marks)} MiB")
    add("")
    add("Targets:")
    add("")
    add("| target | phase | measured | holds |")
    add("|---|---|---|---|")
    for phase in run.phases:
        errors = sum(not s.ok for s in phase.tally.samples)
        add(f"| zero errors | {phase.name} | {errors} of {len(phase.tally.samples)} | {yes(errors == 0)} |")
    for phase in run.phases:
        kind = "rest repeated" if phase.name == "repeating" else "rest distinct"
        single = statistics.median(run.base[kind])
        for way in ("all", "rest", "mcp"):
            times = [s.seconds for s in phase.tally.samples if way == "all" or s.way == way]
            p95 = percentile(times, 95)
            ratio = p95 / single
            label = "both" if way == "all" else way.upper()
            add(
                f"| p95 ≤ 5× single-client p50 ({kind}, {ms(single)} ms) | {phase.name}, {label} "
                f"| p95 {ms(p95)} ms = {ratio:.1f}× | {yes(ratio <= 5)} |"
            )
    for name, first, middle, last in growths:
        holds = last <= first * (1 + args.rss_tolerance / 100)
        add(
            f"| RSS of the last {WINDOW:g} s within {args.rss_tolerance:g}% of the first {WINDOW:g} s "
            f"| {name} | {mib(first)} → {mib(last)} MiB ({change(first, last)}) | {yes(holds)} |"
        )
        # The server's caches are bounded (256 slices per build): once they are full, it
        # must not grow at all.
        steady = last <= middle * (1 + args.rss_tolerance / 100)
        add(
            f"| RSS of the last {WINDOW:g} s within {args.rss_tolerance:g}% of the middle {WINDOW:g} s "
            f"(bounded caches full) | {name} | {mib(middle)} → {mib(last)} MiB ({change(middle, last)}) "
            f"| {yes(steady)} |"
        )
    if len(growths) > 1:
        first, last = growths[0][1], growths[-1][3]
        holds = last <= first * (1 + args.rss_tolerance / 100)
        add(
            f"| same, across the run | first 10 s of {growths[0][0]} → last 10 s of {growths[-1][0]} "
            f"| {mib(first)} → {mib(last)} MiB ({change(first, last)}) | {yes(holds)} |"
        )
    add("")
    requests = metric_sums(run.metrics, "kbc_http_requests_total", ("endpoint", "status"))
    tools = metric_sums(run.metrics, "kbc_mcp_tool_calls_total", ("tool", "outcome"))
    add("`/metrics` at the end, against what the clients counted over the whole run (baseline included):")
    add("")
    add("| series | server | clients |")
    add("|---|---:|---:|")
    for (endpoint, status), value in sorted(requests.items()):
        counted = run.client_counts.get(f"http {endpoint} {status}")
        add(
            f'| kbc_http_requests_total{{endpoint="{endpoint}",status="{status}"}} | {value:g} '
            f"| {counted if counted is not None else ''} |"
        )
    for (tool, outcome), value in sorted(tools.items()):
        counted = run.client_counts.get(f"tool {tool} {outcome}")
        add(
            f'| kbc_mcp_tool_calls_total{{tool="{tool}",outcome="{outcome}"}} | {value:g} '
            f"| {counted if counted is not None else ''} |"
        )
    add(f"| sum of kbc_http_requests_total | {sum(requests.values()):g} | |")
    add(f"| sum of kbc_mcp_tool_calls_total | {sum(tools.values()):g} | |")
    add("")
    failures = Counter[str]()
    for phase in run.phases:
        failures.update({f"{phase.name}, {k}": v for k, v in phase.tally.failures.items()})
    tracebacks = run.server_log.count("Traceback (most recent call last)")
    add(
        f"Server: exit status {run.server_exit} after SIGTERM; {tracebacks} traceback(s) in its output; "
        f"MCP sessions opened per phase: {', '.join(f'{p.name} {p.tally.sessions}' for p in run.phases)}."
    )
    if failures:
        add("")
        add("Errors (first kinds):")
        add("")
        for text, count in failures.most_common(10):
            add(f"- {count}× {text}")
    return "\n".join(lines) + "\n"


# -- main ---------------------------------------------------------------------------------


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
            task = lambda client, request: TASKS[(client + request) % len(TASKS)]  # noqa: E731
        elif name == "distinct":
            task = lambda client, request: distinct.next()  # noqa: E731
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
