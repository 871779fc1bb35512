"""kbc's knowledge base as MCP tools, served over stdio here and over streamable HTTP by
:mod:`kbc.serve.http` (beside the REST API and the browsable UI).

Every tool returns its data twice, as the MCP spec recommends: as ``structuredContent``
(validated against the tool's ``outputSchema``; a list result sits under ``"result"``, the
SDK's convention for non-object results) and as one text block holding the same data as
JSON, for clients that only read text. A :class:`~kbc.domain.errors.KbcError` becomes a
tool error (``isError``) whose text is ``str(error)``: the message and the hint.

The knowledge base is opened once per server; calls run on the server's worker pool
(:mod:`kbc.serve.worker`), so a slow one never holds up the others. The knowledge base
serialises what must not run at once (a retrieval over its index) and, before each
request, follows the store to its newest completed build.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from kbc import __version__
from kbc.domain.codec import to_data
from kbc.serve.toollist import CompactServer
from kbc.serve.worker import Worker
from kbc.services.fused import named, retrieve_across, search_across, symbols_across
from kbc.services.knowledge import KnowledgeBase
from kbc.services.payloads import (
    answer_data,
    file_data,
    fitted,
    hits_data,
    scopes_data,
    slice_data,
    symbols_data,
    use_cases_data,
    view_list_data,
)
from kbc.services.workspace import Workspace

__all__ = ["build_server", "create_server", "serve_stdio"]

HTTP_PATH = "/mcp"

INSTRUCTIONS = """\
kbc serves the compiled knowledge base of a repository (or several): facts extracted from the
code, typed views (architecture, modules, features, business rules, entry points,
integrations) and a budgeted retrieval index.

- Start a task with retrieve_slice: the right files with exact paths and line ranges, packed
  under a token budget (list_use_cases names the profiles and their budgets).
- Read exact lines with get_file; find definitions, callers and callees with get_symbol.
- For the big picture, list_views then get_view (start with get_view("architecture")).
- ask answers a question with citations [path:start-end]; search is a plain ranked lookup.
- Team knowledge (paths under @knowledge/) comes in scopes: list_scopes names them, and
  retrieve_slice and ask take `scopes` (by default every scope but the projects/... ones).
  When you find team knowledge wrong or missing, propose_update suggests the change (a branch
  for a person to merge; nothing changes until then).
- After using a slice or an answer, call report_usage with its query_id and the ids of the
  items that helped (an empty list if none did): that is how missing knowledge is found.
- A server may answer for several repositories: list_repositories names them, and every tool
  takes `repository`; retrieve_slice, search and get_symbol without one read them all.
"""

Repository = Annotated[
    str | None,
    Field(description="Repository name (list_repositories); default: the only one, or all."),
]
READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
RECORDS = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)

# The return annotations publish the output schemas; the tools build the CallToolResult.
ObjectResult = Annotated[CallToolResult, dict[str, Any]]
ListResult = Annotated[CallToolResult, list[dict[str, Any]]]


# The tokens a slice leaves of its budget for the line naming its query_id ("query_id: " and 16
# hex digits, or "ws-" and 16 across repositories, after a blank line: at most 24 tokens).
QUERY_ID_TOKENS = 32


def packed_within(budget: int) -> int:
    """The budget a slice is packed within, so that it and its query_id line fit ``budget``."""
    return max(1, budget - QUERY_ID_TOKENS)


def slice_text(data: dict[str, Any]) -> str:
    """What a client reads of a slice: its text and the query_id to report its usage with."""
    return f"{data['text']}\n\nquery_id: {data['query_id']}"


def create_server(kb: KnowledgeBase) -> MCPServer:
    """An MCP server with kbc's nine tools over ``kb`` (opened once, shared by all calls)."""
    return build_server(Worker(kb))


def serve_stdio(served: KnowledgeBase | Workspace) -> None:
    """Serve the tools on stdin/stdout until stdin closes; every store is closed then."""
    worker = Worker(served)
    worker.workspace.start()
    try:
        build_server(worker).run("stdio")
    finally:
        worker.close()


def build_server(worker: Worker) -> MCPServer:  # noqa: C901 - one nested function per tool
    """The MCP server whose tools run on ``worker``."""
    server: MCPServer = CompactServer(
        "kbc", title="kbc knowledge base", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )

    @server.tool(annotations=READ_ONLY)
    async def retrieve_slice(
        task: Annotated[
            str,
            Field(
                description="What you are about to do, in plain words "
                "(e.g. 'add a refund endpoint with validation')."
            ),
        ],
        use_case: Annotated[
            str,
            Field(
                description="Retrieval profile: implementation, review, qa, "
                "architecture, ... (see list_use_cases)."
            ),
        ] = "implementation",
        budget: Annotated[
            int | None, Field(description="Token budget of the slice; default: the use case's budget.")
        ] = None,
        scopes: Annotated[
            list[str] | None,
            Field(
                description="Knowledge scopes the slice may hold "
                "(see list_scopes); default: every scope "
                "but the projects/... ones."
            ),
        ] = None,
        min_confidence: Annotated[
            float | None,
            Field(
                ge=0,
                le=1,
                description="Below this confidence pack only pointers; default: the floor; 0: always pack.",
            ),
        ] = None,
        repository: Repository = None,
    ) -> ObjectResult:
        """Start a task here: the code, tests, docs, views and team notes it needs, with exact
        paths and line ranges, packed within a token budget. You read the slice and a last line
        with its `query_id` (for report_usage); its header says the confidence, and when little
        matches the task it packs only pointers. The structured result adds `items` (id, path,
        lines, score, tokens) and `matched` (what the task named)."""

        def work(kb: KnowledgeBase) -> dict[str, Any]:
            asked = kb.use_cases.named(use_case).budget if budget is None else budget
            return slice_data(
                *kb.retrieve_logged(
                    task, use_case, packed_within(asked), scopes=scopes, min_confidence=min_confidence
                )
            )

        def across(workspace: Workspace) -> dict[str, Any]:
            return retrieve_across(
                workspace,
                task,
                use_case,
                budget,
                scopes=scopes,
                min_confidence=min_confidence,
                reserve=QUERY_ID_TOKENS,
            )

        def one(kb: KnowledgeBase) -> dict[str, Any]:
            return named(work(kb), worker.workspace.chosen(repository), worker.workspace)

        return await worker.reply(
            "retrieve_slice", one, repository=repository, across=across, text_of=slice_text
        )

    @server.tool(annotations=READ_ONLY)
    async def ask(
        question: Annotated[
            str, Field(description="A question about the repository (e.g. 'how are refunds validated?').")
        ],
        scopes: Annotated[
            list[str] | None,
            Field(description="Knowledge scopes to answer from; default: every scope but projects/..."),
        ] = None,
        budget: Annotated[
            int | None,
            Field(gt=0, description="Tokens of sources to answer from; default: the qa use case's budget."),
        ] = None,
        repository: Repository = None,
    ) -> ObjectResult:
        """Answer a question from retrieved sources, citing [path:start-end] for every claim:
        `answer` (Markdown), `mode` ("llm", or "extractive": passages quoted when no LLM is
        configured), `citations`, `sources` and `query_id` for report_usage."""

        def answer(kb: KnowledgeBase) -> dict[str, Any]:
            return answer_data(*kb.ask(question, scopes=scopes, budget=budget))

        return await worker.reply("ask", answer, repository=repository)

    @server.tool(annotations=READ_ONLY)
    async def search(
        query: Annotated[str, Field(description="Words, identifiers or a phrase to look up.")],
        k: Annotated[int, Field(description="How many hits to return.")] = 10,
        budget: Annotated[
            int | None,
            Field(
                gt=0,
                description="Tokens the hits' texts may take (default: no limit).",
            ),
        ] = None,
        repository: Repository = None,
    ) -> ListResult:
        """Ranked lookup over the index: the top k chunks (id, path, lines, kind, score, symbols,
        text). Use it to locate something specific; for a task prefer retrieve_slice."""
        return await worker.reply(
            "search",
            lambda kb: hits_data(kb.search(query, k, budget=budget)),
            listing=True,
            repository=repository,
            across=lambda workspace: hits_data(search_across(workspace, query, k, budget=budget)),
        )

    @server.tool(annotations=READ_ONLY)
    async def get_view(
        id: Annotated[
            str,
            Field(
                description="A view id from list_views, e.g. 'architecture', "
                "'module:pkg.sub', 'entry_points'."
            ),
        ],
        budget: Annotated[
            int | None,
            Field(
                gt=0,
                description="Tokens the view may take (longest lists cut first; `truncated` names them).",
            ),
        ] = None,
        repository: Repository = None,
    ) -> ObjectResult:
        """One view of the repository: `facts` extracted from the code (modules, layers,
        dependencies, rules, entry points, ...) and `interpretation` (prose grounded in them)."""

        def view(kb: KnowledgeBase) -> dict[str, Any]:
            data: dict[str, Any] = to_data(kb.reads.view(id))
            return data if budget is None else fitted(data, budget, kb.components.token_counter().count)

        return await worker.reply("get_view", view, repository=repository)

    @server.tool(annotations=READ_ONLY)
    async def list_views(
        kind: Annotated[
            str | None,
            Field(
                description="Only views of this kind: architecture, module, "
                "feature, workflow, entry_points, domain_concepts, "
                "business_rules or integrations."
            ),
        ] = None,
        repository: Repository = None,
    ) -> ListResult:
        """The views of the repository: id, kind, title and where their prose comes from (llm,
        docstring, none). Read one with get_view."""
        return await worker.reply(
            "list_views", lambda kb: view_list_data(kb.reads.views(kind)), listing=True, repository=repository
        )

    @server.tool(annotations=READ_ONLY)
    async def get_symbol(
        name: Annotated[
            str,
            Field(
                description="A qualified name (pkg.mod.func, pkg.mod.Class.method) "
                "or its tail (func, Class.method)."
            ),
        ],
        repository: Repository = None,
    ) -> ListResult:
        """Where a function, class or method is defined (`location`: path:start-end), with its
        signature, callers and callees."""
        return await worker.reply(
            "get_symbol",
            lambda kb: symbols_data(kb.reads.symbol(name)),
            listing=True,
            repository=repository,
            across=lambda workspace: symbols_across(workspace, name),
        )

    @server.tool(annotations=READ_ONLY)
    async def get_file(
        path: Annotated[str, Field(description="Path in the repository, e.g. 'pkg/mod.py'.")],
        start: Annotated[int | None, Field(description="First line, 1-based (default 1).")] = None,
        end: Annotated[int | None, Field(description="Last line, inclusive (default: the end).")] = None,
        budget: Annotated[
            int | None,
            Field(
                gt=0,
                description="Tokens the lines may take (`truncated` when some are left out).",
            ),
        ] = None,
        repository: Repository = None,
    ) -> ObjectResult:
        """Exact lines of a tracked file (at most 2000 per call): `text`, `start_line`, `end_line`
        and `lines`. Untracked, ignored and secret files (.env, keys) are refused; a credential
        in a file reads [REDACTED]."""
        return await worker.reply(
            "get_file", lambda kb: file_data(kb.reads.file(path, start, end, budget)), repository=repository
        )

    @server.tool(annotations=READ_ONLY)
    async def list_use_cases(repository: Repository = None) -> ListResult:
        """Retrieval profiles for retrieve_slice: name, description, default budget."""
        return await worker.reply(
            "list_use_cases",
            lambda kb: use_cases_data(kb.use_cases.all().values()),
            listing=True,
            repository=repository,
        )

    @server.tool(annotations=READ_ONLY)
    async def list_scopes(repository: Repository = None) -> ListResult:
        """Knowledge scopes (team Markdown: domain, conventions, projects/...): scope, documents,
        roots, default (read when a call names none)."""
        return await worker.reply(
            "list_scopes", lambda kb: scopes_data(kb.reads.scopes()), listing=True, repository=repository
        )

    @server.tool(annotations=RECORDS)
    async def propose_update(
        path: Annotated[
            str,
            Field(
                description="The document as retrieval shows it (@knowledge/<root>/<path>), "
                "or relative to its root."
            ),
        ],
        rationale: Annotated[str, Field(description="Why it should change: what is wrong or missing.")],
        author: Annotated[str, Field(description="Who proposes it (your agent's name).")],
        content: Annotated[str | None, Field(description="The whole new document.")] = None,
        diff: Annotated[str | None, Field(description="Or a unified diff of the document.")] = None,
        repository: Repository = None,
    ) -> ObjectResult:
        """Propose a fix or addition to team knowledge you find wrong or missing: one commit on
        a new branch kbc/proposal-<id> of its knowledge root, for a person to merge (nothing
        served changes until then; Markdown only, credentials redacted). Returns the proposal
        and, with a forge, its pull request."""
        return await worker.reply(
            "propose_update",
            lambda kb: asdict(
                kb.proposals.propose(path, content=content, diff=diff, rationale=rationale, author=author)
            ),
            repository=repository,
        )

    @server.tool(annotations=READ_ONLY)
    async def list_proposals(repository: Repository = None) -> ListResult:
        """Proposals to team knowledge, newest first: id, path, branch, status (open, merged,
        closed), author, rationale; with a forge, an open one's review ("#12 open, approved")."""
        return await worker.reply(
            "list_proposals",
            lambda kb: [asdict(p) for p in kb.proposals.all()],
            listing=True,
            repository=repository,
        )

    @server.tool(annotations=RECORDS)
    async def report_usage(
        query_id: Annotated[str, Field(description="The query_id returned by retrieve_slice or ask.")],
        helpful_ids: Annotated[
            list[str],
            Field(description="Ids of the items or sources that helped; an empty list if none did."),
        ],
        repository: Repository = None,
    ) -> ObjectResult:
        """Report which results of a retrieve_slice or ask call helped (an empty list marks a
        knowledge gap). Returns {"recorded": false} for an unknown or expired query id."""

        def usage(workspace: Workspace) -> dict[str, Any]:
            return {"recorded": workspace.report_usage(query_id, helpful_ids, repository)}

        return await worker.reply("report_usage", lambda kb: usage(worker.workspace), across=usage)

    @server.tool(annotations=RECORDS)
    async def refresh(
        wait: Annotated[
            bool,
            Field(description="Return once it has ended, or after serve.refresh_wait (60 s)."),
        ] = False,
        repository: Repository = None,
    ) -> ObjectResult:
        """Refresh the repository's store from its work tree or remote, in the background (a
        failed one is tried again at once). Returns it as list_repositories describes it."""

        def queue(workspace: Workspace) -> dict[str, Any]:
            name = workspace.chosen(repository)
            workspace.enqueue(name)
            ended = True
            if wait:
                ended = workspace.wait_for(name, workspace.settings.refresh_wait)
            described = workspace.describe(workspace.member(name))
            if not ended:
                described["note"] = (
                    f"not ended after {workspace.settings.refresh_wait} s (serve.refresh_wait): the "
                    "refresh continues in the background; list_repositories shows when it ends"
                )
            return described

        return await worker.reply("refresh", lambda kb: queue(worker.workspace), across=queue, whole=True)

    @server.tool(annotations=READ_ONLY)
    async def list_repositories() -> ListResult:
        """The repositories this server answers for: name, path or url, commit served, status
        (ready, building, queued, refreshing, failed, not built), behind (a refresh is needed)
        and problem. retrieve_slice, search and get_symbol without `repository` read all."""
        return await worker.reply(
            "list_repositories",
            lambda kb: worker.workspace.listing(),
            listing=True,
            across=lambda workspace: workspace.listing(),
        )

    return server
