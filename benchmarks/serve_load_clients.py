"""The clients of the serve_load benchmark: the tasks they send, one REST or MCP retrieve and
what is wrong with its answer, and a REST or MCP client's loop over a phase (its plan, and the
tally of its requests).
"""

from __future__ import annotations

import itertools
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx

USE_CASE = "implementation"

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


class DistinctTasks:
    """Tasks never sent before in this run: a base task, a context and a counter."""

    def __init__(self) -> None:
        self._counter = itertools.count(1)

    def next(self) -> str:
        n = next(self._counter)
        base = TASKS[n % len(TASKS)]
        context = CONTEXTS[(n // len(TASKS)) % len(CONTEXTS)]
        return f"{base} {context} (case {n})"

    def of(self, _client: int, _request: int) -> str:
        """The next task, whoever asks (a phase's task for a client's request)."""
        return self.next()


def repeating(client: int, request: int) -> str:
    """The tasks in turn, the same few asked again and again (a phase's task)."""
    return TASKS[(client + request) % len(TASKS)]


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
