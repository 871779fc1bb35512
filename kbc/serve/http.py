"""One HTTP server for a knowledge base, or a workspace of several: MCP at ``/mcp``, the REST
API at ``/api/v1``, the UI at ``/`` and Prometheus metrics at ``/metrics``, all on one port and
one pool of worker threads.

``kbc serve --transport http`` runs it (:func:`kbc.serve.run.serve`); ``--transport stdio``
serves MCP alone on stdin/stdout (:func:`kbc.serve.mcp.serve_stdio`) and never loads this.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import FrameType
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kbc.domain.errors import KbcError
from kbc.domain.places import is_loopback
from kbc.serve.api import PREFIX, error_response, routes
from kbc.serve.mcp import HTTP_PATH, build_server
from kbc.serve.metrics import CONTENT_TYPE, Metrics
from kbc.serve.pages import Site
from kbc.serve.security import Guard, check_bind
from kbc.serve.worker import Worker
from kbc.services.knowledge import KnowledgeBase
from kbc.services.workspace import Workspace

__all__ = ["App", "create_app", "serve_http"]


class App:
    """The ASGI application of :func:`create_app`, with what tests and the runner need of it."""

    def __init__(self, asgi: ASGIApp, worker: Worker, metrics: Metrics) -> None:
        self.asgi = asgi
        self.worker = worker
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.asgi(scope, receive, send)

    def close(self) -> None:
        self.worker.close()


def _endpoint_label(path: str) -> str:
    """A bounded label for the metrics: the route's first segments, never the raw path."""
    if path.startswith(PREFIX + "/"):
        return PREFIX + "/" + path[len(PREFIX) + 1 :].split("/")[0]
    head = "/" + path.lstrip("/").split("/")[0]
    known = {
        "/",
        "/mcp",
        "/metrics",
        "/static",
        "/favicon.ico",
        "/login",
        "/views",
        "/view",
        "/graph",
        "/symbol",
        "/source",
        "/search",
        "/slice",
        "/ask",
        "/gaps",
        "/drift",
    }
    return head if head in known else "other"


class _Measured:
    """Counts every HTTP request and its time by endpoint and status."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            self.metrics.request(
                _endpoint_label(str(scope.get("path", ""))),
                str(scope.get("method", "")),
                status,
                time.perf_counter() - started,
            )


def _transport_security(host: str) -> Any:
    """MCP's own DNS-rebinding protection (Host and Origin checked) on a loopback bind."""
    from mcp.server.transport_security import TransportSecuritySettings

    if not is_loopback(host):
        return None
    bare = host.strip("[]")
    named = f"[{bare}]" if ":" in bare else bare
    hosts = sorted({"127.0.0.1", "localhost", "[::1]", named})
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{h}:*" for h in hosts],
        allowed_origins=[f"http://{h}:*" for h in hosts],
    )


def create_app(
    served: KnowledgeBase | Workspace, *, host: str = "127.0.0.1", token: str | None = None
) -> App:
    """The whole HTTP surface over one knowledge base or a workspace of several, as an ASGI
    app; ``host`` is where it will be bound (a loopback bind checks Host and Origin),
    ``token`` the bearer token, if any."""
    workspace = served if isinstance(served, Workspace) else Workspace.of(served)
    only = workspace.single()
    metrics = Metrics(stores=workspace.open_stores)
    if only is None:
        metrics.repositories(len(workspace.names()), workspace.open_count, workspace.waiting)
    metrics.publications(workspace.followed)
    workspace.listen(metrics.heard)
    worker = Worker(workspace, metrics)
    settings = workspace.settings
    mcp_app = build_server(worker).streamable_http_app(
        streamable_http_path=HTTP_PATH,
        host=host,
        transport_security=_transport_security(host),
        session_idle_timeout=settings.session_idle_seconds,
        max_sessions=settings.max_sessions,
    )

    async def metrics_endpoint(request: Request) -> Response:
        body = await worker.across(lambda _workspace: metrics.exposition())
        return Response(body, media_type=CONTENT_TYPE)

    site = Site(worker, token)

    def warm(kb: KnowledgeBase) -> None:
        """Open the index and read the views before the first request, not during it."""
        try:
            kb.served.retriever()
            site.snapshot(kb)
        except KbcError:
            pass  # no build yet: each request says so

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with mcp_app.router.lifespan_context(mcp_app):
            workspace.start()  # follow the repositories while the server runs
            if only is not None:  # one repository: opened now; several: each on first use
                try:
                    await worker.run(warm)
                except KbcError:
                    pass
            yield

    async def not_found(request: Request, exc: Exception) -> Response:
        path = request.url.path
        if path.startswith(PREFIX + "/") or path == PREFIX:
            return error_response(
                404, f"no endpoint {request.method} {path}", f"{PREFIX}/openapi.json lists the endpoints"
            )
        return await site.not_found(request)

    app = Starlette(
        exception_handlers={404: not_found},
        lifespan=lifespan,
        routes=[
            Route(HTTP_PATH, mcp_app, methods=["GET", "POST", "DELETE"]),
            Route("/metrics", metrics_endpoint, methods=["GET"]),
            *routes(worker),
            *site.routes(),
        ],
    )
    guarded = Guard(app, token=token or None, loopback=is_loopback(host))
    return App(_Measured(guarded, metrics), worker, metrics)


def serve_http(
    workspace: Workspace, host: str = "127.0.0.1", port: int = 8765, token: str | None = None
) -> None:
    """Serve everything over HTTP at ``http://host:port/`` until SIGINT or SIGTERM (a graceful
    shutdown), every store closed then; a ``token`` makes every request carry it (binding
    anything but a loopback address requires one)."""
    check_bind(host, port, token)
    app = create_app(workspace, host=host, token=token)
    try:
        _run(app, host, port, token)
    finally:
        app.close()


class _Stopped(Exception):
    """SIGINT or SIGTERM, re-raised by uvicorn once it has shut down gracefully."""


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _Stopped


def _run(app: App, host: str, port: int, token: str | None) -> None:
    import uvicorn

    from kbc.serve.protocol import server_config

    config = server_config(app, host, port, timeout_graceful_shutdown=3)
    shown = f"[{host}]" if ":" in host else host
    print(
        f"kbc on http://{shown}:{port}/ (UI), {PREFIX} (REST), {HTTP_PATH} (MCP), /metrics"
        + (" (bearer token required)" if token else ""),
        file=sys.stderr,
        flush=True,
    )
    # uvicorn handles the signals while it runs, then raises the one it caught again; ending
    # with _Stopped instead of dying of it lets the caller close the knowledge base.
    in_main = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGINT, signal.SIGTERM)} if in_main else {}
    try:
        uvicorn.Server(config).run()
    except _Stopped:
        pass
    except SystemExit as exit_:  # uvicorn's way to report that it could not start
        raise KbcError(
            f"could not serve on {shown}:{port} (uvicorn's error is above)",
            hint="is the port taken? choose another with --port",
        ) from exit_
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
