"""The report of the serve_load benchmark: the Markdown for ``benchmarks/RESULTS.md`` (latency,
CPU, RSS, the targets, ``/metrics`` against what the clients counted) and the helpers that read
the server's metrics and summarise its RSS samples.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from serve_load_clients import USE_CASE
from serve_load_phases import Phase
from served import percentile

HERE = Path(__file__).resolve().parent
WINDOW = 10.0  # seconds of RSS samples whose median opens and closes a phase


def ms(seconds: float) -> str:
    return "–" if seconds != seconds else f"{seconds * 1000:.1f}"


def mib(kib: float) -> str:
    return "–" if kib != kib else f"{kib / 1024:.1f}"


def change(first: float, last: float) -> str:
    return f"{(last / first - 1) * 100:+.1f}%"


def yes(holds: bool) -> str:
    return "yes" if holds else "NO"


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
