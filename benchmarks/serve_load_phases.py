"""A phase of the serve_load benchmark: many clients at once while the server's RSS and the
CPU of both sides are sampled, and the single-client baseline measured before the load.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from dataclasses import dataclass

import anyio
import httpx
from serve_load_clients import (
    TASKS,
    DistinctTasks,
    Plan,
    Tally,
    mcp_client,
    mcp_retrieve,
    rest_client,
    rest_retrieve,
)
from served import cpu_seconds, rss_kib
from timing import Sample, clock


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
    server_cpu: list[float] = []  # the server's CPU seconds (read from /proc) at the start and the end
    measured: list[Sample] = []  # this process's wall and CPU seconds over the phase

    async def sample_rss() -> None:
        await plan.start.wait()
        while not finished.is_set():
            rss.append((time.perf_counter() - plan.started, rss_kib(pid)))
            with anyio.move_on_after(1.0):
                await finished.wait()
        rss.append((time.perf_counter() - plan.started, rss_kib(pid)))

    async def clients_and_then_stop() -> None:
        with ExitStack() as phase:  # the clock runs from the start signal until every client is done
            async with anyio.create_task_group() as group:
                for index in range(clients):
                    if index < rest_clients:
                        group.start_soon(rest_client, url, index, plan, tally)
                    else:
                        group.start_soon(mcp_client, url, index, plan, tally)
                with anyio.move_on_after(120):
                    while plan.ready < clients:
                        await anyio.sleep(0.05)
                plan.started = time.perf_counter()  # the clients' deadline and the RSS samples count from it
                server_cpu.append(cpu_seconds(pid))
                measured.append(phase.enter_context(clock()))
                plan.start.set()
        server_cpu.append(cpu_seconds(pid))
        finished.set()

    async with anyio.create_task_group() as group:
        group.start_soon(sample_rss)
        group.start_soon(clients_and_then_stop)
    cpu = (server_cpu[1] - server_cpu[0], measured[0].cpu, measured[0].wall)
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
            with clock() as sample:
                problem = await send(task)
            times.append(sample.wall)
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
