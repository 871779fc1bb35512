"""kbc's knowledge base as MCP tools, served over stdio or streamable HTTP.

Every tool returns its data twice, as the MCP spec recommends: as ``structuredContent``
(validated against the tool's ``outputSchema``; a list result sits under ``"result"``, the
SDK's convention for non-object results) and as one text block holding the same data as
JSON, for clients that only read text. A :class:`~kbc.domain.errors.KbcError` becomes a
tool error (``isError``) whose text is ``str(error)``: the message and the hint.

The knowledge base is opened once per server; calls run on a bounded pool of threads, so a
slow one (an LLM answer, a large file) never holds up the others. The knowledge base
serialises what must not run at once (a retrieval over its index) and, before each
request, follows the store to its newest completed build.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import signal
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from types import FrameType
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field
from starlette.types import ASGIApp, Receive, Scope, Send

from kbc import __version__
from kbc.domain.codec import to_data
from kbc.domain.errors import ConfigError, FieldError, KbcError
from kbc.services.knowledge import KnowledgeBase

__all__ = ["BearerTokenMiddleware", "create_server", "is_loopback", "serve"]

HTTP_PATH = "/mcp"
TRANSPORTS = ("stdio", "http")

INSTRUCTIONS = """\
kbc serves the compiled knowledge base of one repository: facts extracted statically from the
code, typed views (architecture, modules, features, business rules, entry points,
integrations) and a budgeted retrieval index.

- Start a task with retrieve_slice: the right files with exact paths and line ranges, packed
  under a token budget (list_use_cases names the profiles and their budgets).
- Read exact lines with get_file; find definitions, callers and callees with get_symbol.
- For the big picture, list_views then get_view (start with get_view("architecture")).
- ask answers a question with citations [path:start-end]; search is a plain ranked lookup.
- After using a slice or an answer, call report_usage with its query_id and the ids of the
  items that helped (an empty list if none did): that is how missing knowledge is found.
"""

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
RECORDS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                          open_world_hint=False)

# The return annotations publish the output schemas; the tools build the CallToolResult.
ObjectResult = Annotated[CallToolResult, dict[str, Any]]
ListResult = Annotated[CallToolResult, list[dict[str, Any]]]


# Tool calls in progress at once; more wait their turn.
CALL_THREADS = 4


class _Worker:
    """Runs the knowledge base's calls on a bounded pool of threads."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self._executor = ThreadPoolExecutor(max_workers=CALL_THREADS, thread_name_prefix="kbc-mcp")

    async def reply(self, work: Callable[[KnowledgeBase], Any], *, listing: bool = False) -> CallToolResult:
        try:
            data = await asyncio.wrap_future(self._executor.submit(work, self.kb))
        except KbcError as error:
            return CallToolResult(content=[TextContent(type="text", text=str(error))], is_error=True)
        text = json.dumps(data, indent=1, ensure_ascii=False)
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              structured_content={"result": data} if listing else data)

    def close(self) -> None:
        """Close the knowledge base, then stop the threads."""
        try:
            self._executor.submit(self.kb.close).result()
        finally:
            self._executor.shutdown(wait=True, cancel_futures=True)


def create_server(kb: KnowledgeBase) -> MCPServer:
    """An MCP server with kbc's nine tools over ``kb`` (opened once, shared by all calls)."""
    return _build(kb)[0]


def _build(kb: KnowledgeBase) -> tuple[MCPServer, _Worker]:
    server: MCPServer = MCPServer("kbc", title="kbc knowledge base", version=__version__,
                                  instructions=INSTRUCTIONS, log_level="WARNING")
    worker = _Worker(kb)

    @server.tool(annotations=READ_ONLY)
    async def retrieve_slice(
        task: Annotated[str, Field(description="What you are about to do, in plain words "
                                               "(e.g. 'add a refund endpoint with validation').")],
        use_case: Annotated[str, Field(description="Retrieval profile: implementation, review, qa, "
                                                   "architecture, ... (see list_use_cases).")]
        = "implementation",
        budget: Annotated[int | None, Field(description="Token budget of the slice; default: the "
                                                        "use case's budget.")] = None,
    ) -> ObjectResult:
        """Prime work on a task with a precision slice of the repository: the most relevant code,
        tests, docs and views, with exact paths and line ranges, packed under a token budget.

        Returns `text` (the slice, ready to read: each file once, its blocks in line order),
        `items` (id, path, start_line, end_line, kind, score, tokens of each printed block),
        `matched` (the paths, code names, traceback frames, messages and options the task named,
        and the definitions or lines they matched), `tokens`, `budget`, `use_case`, `retrieval`
        ("hybrid" or "lexical"), `fingerprint`, and `query_id` for report_usage. The same task on
        the same build always gives the same slice."""

        def work(kb: KnowledgeBase) -> dict[str, Any]:
            found, query_id = kb.retrieve_logged(task, use_case, budget)
            data: dict[str, Any] = json.loads(found.to_json())
            return {**data, "query_id": query_id}

        return await worker.reply(work)

    @server.tool(annotations=READ_ONLY)
    async def ask(
        question: Annotated[str, Field(description="A question about the repository "
                                                   "(e.g. 'how are refunds validated?').")],
    ) -> ObjectResult:
        """Answer a question about the repository from retrieved sources, citing [path:start-end]
        for every claim; citations that point outside the sources are dropped.

        Returns `answer` (Markdown), `mode` ("llm", or "extractive" when no LLM is configured: the
        best passages quoted), `citations`, `dropped_citations`, `sources` (id, path, lines, kind,
        score), `retrieval`, `model`, `note`, and `query_id` for report_usage."""

        def work(kb: KnowledgeBase) -> dict[str, Any]:
            answer, query_id = kb.ask(question)
            return {**answer.as_data(), "query_id": query_id}

        return await worker.reply(work)

    @server.tool(annotations=READ_ONLY)
    async def search(
        query: Annotated[str, Field(description="Words, identifiers or a phrase to look up.")],
        k: Annotated[int, Field(description="How many hits to return.")] = 10,
    ) -> ListResult:
        """Ranked lookup over the index (code, tests, docs, views), without a budget: the top k
        chunks, each with id, path, start_line, end_line, kind, score, heading, symbols and text.
        To prime work on a task prefer retrieve_slice; use search to locate something specific."""
        return await worker.reply(lambda kb: kb.search(query, k), listing=True)

    @server.tool(annotations=READ_ONLY)
    async def get_view(
        id: Annotated[str, Field(description="A view id from list_views, e.g. 'architecture', "
                                             "'module:pkg.sub', 'entry_points'.")],
    ) -> ObjectResult:
        """One typed view of the repository: `facts` extracted statically from the code (modules,
        layers, dependencies, rules, entry points, ...), `interpretation` (prose from an LLM or
        docstrings, grounded in the facts), `title`, `kind`, `provenance` and `grounding`."""
        return await worker.reply(lambda kb: to_data(kb.view(id)))

    @server.tool(annotations=READ_ONLY)
    async def list_views(
        kind: Annotated[str | None, Field(description="Only views of this kind: architecture, module, "
                                                      "feature, workflow, entry_points, domain_concepts, "
                                                      "business_rules or integrations.")] = None,
    ) -> ListResult:
        """The views of the repository: id, kind, title and source of their prose ("llm",
        "docstring" or "none"). Read one with get_view."""
        return await worker.reply(
            lambda kb: [{"id": v.id, "kind": v.kind, "title": v.title, "source": v.provenance.source}
                        for v in kb.views(kind)],
            listing=True)

    @server.tool(annotations=READ_ONLY)
    async def get_symbol(
        name: Annotated[str, Field(description="A qualified name (pkg.mod.func, pkg.mod.Class.method) "
                                               "or its tail (func, Class.method).")],
    ) -> ListResult:
        """Where a function, class or method is defined, with its signature facts, callers and
        callees; each match carries `location` as "path:start-end" (read it with get_file)."""
        return await worker.reply(
            lambda kb: [dict(to_data(r), location=r.location) for r in kb.symbol(name)], listing=True)

    @server.tool(annotations=READ_ONLY)
    async def get_file(
        path: Annotated[str, Field(description="Path relative to the repository root, "
                                               "e.g. 'pkg/mod.py'.")],
        start: Annotated[int | None, Field(description="First line, 1-based (default 1).")] = None,
        end: Annotated[int | None, Field(description="Last line, inclusive (default: the end).")] = None,
    ) -> ObjectResult:
        """Exact lines of a tracked file of the repository (at most 2000 per call): `path`,
        `start_line`, `end_line`, `lines` (the file's length) and `text`. Absolute paths, '..',
        untracked or ignored files and files where credentials were detected are refused."""
        return await worker.reply(lambda kb: kb.file(path, start, end))

    @server.tool(annotations=READ_ONLY)
    async def list_use_cases() -> ListResult:
        """The retrieval use cases (profiles) for retrieve_slice: name, description and default
        token budget."""
        return await worker.reply(
            lambda kb: [{"name": p.name, "description": p.description, "budget": p.budget}
                        for p in kb.use_cases().values()],
            listing=True)

    @server.tool(annotations=RECORDS)
    async def report_usage(
        query_id: Annotated[str, Field(description="The query_id returned by retrieve_slice or ask.")],
        helpful_ids: Annotated[list[str], Field(description="Ids of the items or sources that helped; "
                                                            "an empty list if none did.")],
    ) -> ObjectResult:
        """Report which results of a retrieve_slice or ask call helped. An empty list marks the
        query as a knowledge gap (`kbc gaps` lists them). Returns {"recorded": true}, or false
        when the query id is unknown or expired."""
        return await worker.reply(lambda kb: {"recorded": kb.report_usage(query_id, helpful_ids)})

    return server, worker


# -- running ----------------------------------------------------------------


def is_loopback(host: str) -> bool:
    """True for localhost, 127.0.0.0/8 and ::1."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class BearerTokenMiddleware:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>``, else 401.

    The 401 body is a JSON-RPC error, so an MCP client reports why it was turned away."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self._authorized(scope):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
            "code": -32001, "message": "unauthorized: missing or wrong bearer token "
                                       "(send the header 'Authorization: Bearer <KBC_TOKEN>')"}}).encode()
        await send({"type": "http.response.start", "status": 401, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            (b"www-authenticate", b'Bearer realm="kbc", error="invalid_token"')]})
        await send({"type": "http.response.body", "body": body})

    def _authorized(self, scope: Scope) -> bool:
        raw = next((value for name, value in scope["headers"] if name.lower() == b"authorization"), b"")
        scheme, _, credential = bytes(raw).partition(b" ")
        # The digest is compared whatever the scheme, so the time says nothing about either.
        return hmac.compare_digest(credential.strip(), self._token) and scheme.lower() == b"bearer"


def _transport_security(host: str) -> TransportSecuritySettings | None:
    """DNS-rebinding protection (Host and Origin checked) when bound to a loopback address."""
    if not is_loopback(host):
        return None
    bare = host.strip("[]")
    named = f"[{bare}]" if ":" in bare else bare
    hosts = sorted({"127.0.0.1", "localhost", "[::1]", named})
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=[f"{h}:*" for h in hosts],
                                     allowed_origins=[f"http://{h}:*" for h in hosts])


MIN_TOKEN_CHARS = 16  # of a bearer token that guards a bind beyond loopback
_SECRET = ("a long random secret without spaces, e.g. the output of "
           "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`")


def _check_http(host: str, port: int, token: str | None) -> None:
    if not 0 < port < 65536:
        raise ConfigError([FieldError("--port", "serve.port", f"{port} is not a TCP port",
                                      "give a port between 1 and 65535")])
    if token and token != token.strip():
        raise ConfigError([FieldError(
            "KBC_TOKEN", "serve.token", "the token is blank or has white space around it, which no "
            "client can send back in an Authorization header", f"set KBC_TOKEN to {_SECRET}")])
    if token and not is_loopback(host) and len(token) < MIN_TOKEN_CHARS:
        raise ConfigError([FieldError(
            "KBC_TOKEN", "serve.token", f"a {len(token)}-character token guards a bind beyond this "
            f"machine ({host}); it must have at least {MIN_TOKEN_CHARS} characters",
            f"set KBC_TOKEN to {_SECRET}")])
    if not token and not is_loopback(host):
        raise ConfigError([FieldError(
            "--host", "serve.host",
            f"binding {host} exposes the knowledge base beyond this machine, so a bearer token is required",
            "set KBC_TOKEN to a long random secret (clients send 'Authorization: Bearer <token>'), "
            "or bind 127.0.0.1")])


def serve(kb: KnowledgeBase, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8765,
          token: str | None = None) -> None:
    """Serve ``kb``'s tools until stopped: on stdin/stdout (``"stdio"``) or as streamable HTTP at
    ``http://host:port/mcp`` (``"http"``). Over HTTP a ``token`` makes every request carry
    ``Authorization: Bearer <token>``; binding anything but a loopback address requires one.
    Returns when stdin closes (stdio) or on SIGINT/SIGTERM (HTTP, after a graceful shutdown);
    the knowledge base is closed then."""
    if transport not in TRANSPORTS:
        raise KbcError(f"unknown transport {transport!r}", hint="use 'stdio' or 'http'")
    if transport == "http":
        _check_http(host, port, token)
    server, worker = _build(kb)
    try:
        if transport == "stdio":
            server.run("stdio")
        else:
            _run_http(server, host, port, token, kb.settings.session_idle_seconds,
                      kb.settings.max_sessions)
    finally:
        worker.close()


class _Stopped(Exception):
    """SIGINT or SIGTERM, re-raised by uvicorn once it has shut down gracefully."""


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _Stopped


def _run_http(server: MCPServer, host: str, port: int, token: str | None, idle_seconds: int,
              max_sessions: int) -> None:
    import uvicorn

    # A session a client abandons (never sends DELETE) is closed once idle this long, and at
    # most max_sessions are open at once: a busy or careless client cannot grow the server.
    app: ASGIApp = server.streamable_http_app(streamable_http_path=HTTP_PATH, host=host,
                                              transport_security=_transport_security(host),
                                              session_idle_timeout=idle_seconds,
                                              max_sessions=max_sessions)
    if token:
        app = BearerTokenMiddleware(app, token)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False,
                            timeout_graceful_shutdown=3)
    shown = f"[{host}]" if ":" in host else host
    print(f"kbc MCP server on http://{shown}:{port}{HTTP_PATH}"
          + (" (bearer token required)" if token else ""), file=sys.stderr, flush=True)
    # uvicorn handles the signals while it runs, then raises the one it caught again; ending
    # with _Stopped instead of dying of it lets the caller close the knowledge base.
    in_main = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGINT, signal.SIGTERM)} if in_main else {}
    try:
        uvicorn.Server(config).run()
    except _Stopped:
        pass
    except SystemExit as exit_:  # uvicorn's way to report that it could not start
        raise KbcError(f"could not serve on {shown}:{port} (uvicorn's error is above)",
                       hint="is the port taken? choose another with --port") from exit_
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
