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
REFRESH_WAIT = 600.0  # seconds the refresh tool waits, when asked to

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
    Field(
        description="The repository to read (see list_repositories); "
        "default: the only one, or, where a tool reads "
        "several, every one."
    ),
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
    server: MCPServer = MCPServer(
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
                description="Pack nothing (but pointers to the nearest matches) when the slice's "
                "confidence is below this; default: the confidence floor; 0: always pack.",
            ),
        ] = None,
        repository: Repository = None,
    ) -> ObjectResult:
        """Prime work on a task with a precision slice of the repository: the most relevant code,
        tests, docs and views, with exact paths and line ranges, packed under a token budget.

        What you read is the slice itself and a last line naming its `query_id`, within the
        budget (the line's tokens are kept from it). The structured result holds
        `text` (the slice, ready to read: each file once, its blocks in line order),
        `items` (id, path, start_line, end_line, kind, score, tokens of each printed block),
        `matched` (the paths, code names, traceback frames, messages and options the task named,
        and the definitions or lines they matched), `tokens`, `budget`, `use_case`, `retrieval`
        ("hybrid" or "lexical"), `confidence` (0 to 1: that the first document is what the task
        needs) and `low_confidence` (true when little in the repository matches the task: then
        nothing is packed but pointers to the nearest matches, unless min_confidence is given),
        `fingerprint`, and `query_id` for report_usage. The same task on the same build always
        gives the same slice."""

        def work(kb: KnowledgeBase) -> dict[str, Any]:
            asked = kb.profile(use_case).budget if budget is None else budget
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
        """Answer a question about the repository from retrieved sources, citing [path:start-end]
        for every claim; citations that point outside the sources are dropped.

        Returns `answer` (Markdown), `mode` ("llm", or "extractive" when no LLM is configured: the
        best passages quoted), `citations`, `dropped_citations`, `sources` (id, path, lines, kind,
        score), `retrieval`, `model`, `note`, and `query_id` for report_usage."""

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
                description="Tokens the hits' texts may take: fewer "
                "hits when they do not fit (default: no "
                "limit).",
            ),
        ] = None,
        repository: Repository = None,
    ) -> ListResult:
        """Ranked lookup over the index (code, tests, docs, views), without a budget: the top k
        chunks, each with id, path, start_line, end_line, kind, score, heading, symbols and text.
        To prime work on a task prefer retrieve_slice; use search to locate something specific."""
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
                description="Tokens the view may take: its longest lists, "
                "then texts, are cut until it fits, and "
                "`truncated` names them.",
            ),
        ] = None,
        repository: Repository = None,
    ) -> ObjectResult:
        """One typed view of the repository: `facts` extracted statically from the code (modules,
        layers, dependencies, rules, entry points, ...), `interpretation` (prose from an LLM or
        docstrings, grounded in the facts), `title`, `kind`, `provenance` and `grounding`."""

        def view(kb: KnowledgeBase) -> dict[str, Any]:
            data: dict[str, Any] = to_data(kb.view(id))
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
        """The views of the repository: id, kind, title and source of their prose ("llm",
        "docstring" or "none"). Read one with get_view."""
        return await worker.reply(
            "list_views", lambda kb: view_list_data(kb.views(kind)), listing=True, repository=repository
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
        """Where a function, class or method is defined, with its signature facts, callers and
        callees; each match carries `location` as "path:start-end" (read it with get_file)."""
        return await worker.reply(
            "get_symbol",
            lambda kb: symbols_data(kb.symbol(name)),
            listing=True,
            repository=repository,
            across=lambda workspace: symbols_across(workspace, name),
        )

    @server.tool(annotations=READ_ONLY)
    async def get_file(
        path: Annotated[str, Field(description="Path relative to the repository root, e.g. 'pkg/mod.py'.")],
        start: Annotated[int | None, Field(description="First line, 1-based (default 1).")] = None,
        end: Annotated[int | None, Field(description="Last line, inclusive (default: the end).")] = None,
        budget: Annotated[
            int | None,
            Field(
                gt=0,
                description="Tokens the lines may take: the lines from "
                "start that fit, `truncated` true when some "
                "were left out.",
            ),
        ] = None,
        repository: Repository = None,
    ) -> ObjectResult:
        """Exact lines of a tracked file of the repository (at most 2000 per call): `path`,
        `start_line`, `end_line`, `lines` (the file's length) and `text`. Absolute paths, '..',
        untracked or ignored files and files that are secrets by nature (.env, key files) are
        refused; a credential in a file served is replaced by [REDACTED]."""
        return await worker.reply(
            "get_file", lambda kb: file_data(kb.file(path, start, end, budget)), repository=repository
        )

    @server.tool(annotations=READ_ONLY)
    async def list_use_cases(repository: Repository = None) -> ListResult:
        """The retrieval use cases (profiles) for retrieve_slice: name, description and default
        token budget."""
        return await worker.reply(
            "list_use_cases",
            lambda kb: use_cases_data(kb.use_cases().values()),
            listing=True,
            repository=repository,
        )

    @server.tool(annotations=READ_ONLY)
    async def list_scopes(repository: Repository = None) -> ListResult:
        """The knowledge scopes (team Markdown beside the code: domain, conventions, projects/...):
        scope, documents, roots, and default (read when a call names no scopes)."""
        return await worker.reply(
            "list_scopes", lambda kb: scopes_data(kb.scopes()), listing=True, repository=repository
        )

    @server.tool(annotations=RECORDS)
    async def propose_update(
        path: Annotated[
            str,
            Field(
                description="The knowledge document, relative to its root (prefixed by "
                "the root's name when several are configured), or as "
                "retrieval shows it: @knowledge/<root>/<path>."
            ),
        ],
        rationale: Annotated[str, Field(description="Why it should change: what is wrong or missing.")],
        author: Annotated[str, Field(description="Who proposes it (your agent's name).")],
        content: Annotated[str | None, Field(description="The whole new document.")] = None,
        diff: Annotated[str | None, Field(description="Or a unified diff of the document.")] = None,
        repository: Repository = None,
    ) -> ObjectResult:
        """Propose a correction or an addition to the team's knowledge when you find it wrong or
        missing. kbc never writes it: it makes one commit on a new branch kbc/proposal-<id> of the
        knowledge root for a person to review and merge; what kbc serves changes only then.
        Only Markdown under a knowledge root; credentials are redacted. Returns the proposal (id,
        branch, commit, status "open"; with a forge configured, request: the pull request opened
        for it, or request_error: why none was)."""
        return await worker.reply(
            "propose_update",
            lambda kb: asdict(
                kb.propose(path, content=content, diff=diff, rationale=rationale, author=author)
            ),
            repository=repository,
        )

    @server.tool(annotations=READ_ONLY)
    async def list_proposals(repository: Repository = None) -> ListResult:
        """The proposals to the knowledge roots, newest first: id, root, path, branch, status (open,
        merged once a person merged it, closed), author, rationale, date; with a forge configured,
        an open one's request and review ("#12 open, approved")."""
        return await worker.reply(
            "list_proposals",
            lambda kb: [asdict(p) for p in kb.proposals()],
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
        """Report which results of a retrieve_slice or ask call helped. An empty list marks the
        query as a knowledge gap (`kbc gaps` lists them). Returns {"recorded": true}, or false
        when the query id is unknown or expired."""

        def usage(workspace: Workspace) -> dict[str, Any]:
            return {"recorded": workspace.report_usage(query_id, helpful_ids, repository)}

        return await worker.reply("report_usage", lambda kb: usage(worker.workspace), across=usage)

    @server.tool(annotations=RECORDS)
    async def refresh(
        wait: Annotated[
            bool,
            Field(
                description="Wait until the refresh has ended (at most 10 minutes) "
                "and return the repository as it is then."
            ),
        ] = False,
        repository: Repository = None,
    ) -> ObjectResult:
        """Bring the repository's store up to its work tree or remote (a build where there is
        none): queued behind any refresh under way, run in the background, one at a time; the
        answers follow the new build as soon as it is complete. Returns the repository as
        list_repositories describes it (status "queued" or "refreshing" until it ends)."""

        def queue(workspace: Workspace) -> dict[str, Any]:
            name = workspace.chosen(repository)
            workspace.enqueue(name)
            if wait:
                workspace.wait_for(name, REFRESH_WAIT)
            return workspace.describe(workspace.member(name))

        return await worker.reply("refresh", lambda kb: queue(worker.workspace), across=queue)

    @server.tool(annotations=READ_ONLY)
    async def list_repositories() -> ListResult:
        """The repositories this server answers for: name, path or url, branch, commit served,
        built_at, status (ready, building, queued, refreshing, failed, not built), behind (the
        store is behind its repository: a refresh is queued or needed), open and problem.
        Every other tool takes `repository`; retrieve_slice, search and get_symbol without one
        read every repository and name each result's."""
        return await worker.reply(
            "list_repositories",
            lambda kb: worker.workspace.listing(),
            listing=True,
            across=lambda workspace: workspace.listing(),
        )

    return server
