"""The worker pool every way into a server shares (MCP tools, REST endpoints, UI pages): calls
run on a bounded pool of threads, each on the knowledge base of the repository it names (or
the only one), so a slow one (an LLM answer, a large file) never holds up the others."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from mcp.types import CallToolResult, TextContent

from kbc.domain.errors import KbcError
from kbc.serve.metrics import Metrics
from kbc.services.knowledge import KnowledgeBase
from kbc.services.workspace import Workspace

T = TypeVar("T")

# Tool calls in progress at once; more wait their turn.
CALL_THREADS = 4


class Worker:
    """Runs the calls of a server on a bounded pool of threads (shared by every way in it
    offers), each on the knowledge base of the repository it names (or the only one), and
    counts the MCP tool calls when the server keeps metrics."""

    def __init__(self, served: KnowledgeBase | Workspace, metrics: Metrics | None = None) -> None:
        self.workspace = served if isinstance(served, Workspace) else Workspace.of(served)
        self.metrics = metrics
        self._executor = ThreadPoolExecutor(max_workers=CALL_THREADS, thread_name_prefix="kbc-call")

    async def run(self, work: Callable[[KnowledgeBase], T], repository: str | None = None) -> T:
        """``work`` on the knowledge base of ``repository`` (default: the only one)."""

        def call() -> T:
            with self.workspace.using(self.workspace.chosen(repository)) as kb:
                return work(kb)

        return await asyncio.wrap_future(self._executor.submit(call))

    async def across(self, work: Callable[[Workspace], T]) -> T:
        """``work`` on the whole workspace (what reads several repositories at once)."""
        return await asyncio.wrap_future(self._executor.submit(work, self.workspace))

    async def reply(
        self,
        tool: str,
        work: Callable[[KnowledgeBase], Any],
        *,
        listing: bool = False,
        repository: str | None = None,
        across: Callable[[Workspace], Any] | None = None,
        text_of: Callable[[Any], str] | None = None,
        whole: bool = False,
    ) -> CallToolResult:
        """The tool's result: ``work`` in the repository named (or the only one), or, when
        ``across`` is given and several repositories are served with none named, ``across``;
        ``whole``: ``across`` always (a call that opens no store, e.g. one that builds it). Its
        structured content is the data, its text content the data as JSON (or ``text_of`` the
        data, where what a client reads must be less than all of it)."""
        started = time.perf_counter()
        try:
            if across is not None and (whole or (not repository and self.workspace.single() is None)):
                data = await self.across(across)
            else:
                data = await self.run(work, repository)
        except KbcError as error:
            if self.metrics is not None:
                self.metrics.tool(tool, False, time.perf_counter() - started)
            return CallToolResult(content=[TextContent(type="text", text=str(error))], is_error=True)
        if self.metrics is not None:
            self.metrics.tool(tool, True, time.perf_counter() - started)
        text = text_of(data) if text_of is not None else json.dumps(data, indent=1, ensure_ascii=False)
        return CallToolResult(
            content=[TextContent(type="text", text=text)],
            structured_content={"result": data} if listing else data,
        )

    def close(self) -> None:
        """Close every store, then stop the threads."""
        try:
            self._executor.submit(self.workspace.close).result()
        finally:
            self._executor.shutdown(wait=True, cancel_futures=True)
