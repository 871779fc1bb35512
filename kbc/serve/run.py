"""Serve a knowledge base, or a workspace of several, over one transport."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kbc.domain.errors import KbcError

if TYPE_CHECKING:
    from kbc.services.knowledge import KnowledgeBase
    from kbc.services.workspace import Workspace

TRANSPORTS = ("stdio", "http")


def serve(
    served: KnowledgeBase | Workspace,
    transport: str = "stdio",
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
) -> None:
    """Serve ``served`` until stopped: MCP on stdin/stdout (``"stdio"``, without loading the
    HTTP stack), or everything over HTTP at ``http://host:port/`` (``"http"``; see
    :func:`kbc.serve.http.serve_http`). Returns when stdin closes (stdio) or on SIGINT/SIGTERM
    (HTTP); every store is closed then. A workspace follows its repositories in the
    background while it is served."""
    from kbc.services.workspace import Workspace

    if transport not in TRANSPORTS:
        raise KbcError(f"unknown transport {transport!r}", hint="use 'stdio' or 'http'")
    workspace = served if isinstance(served, Workspace) else Workspace.of(served)
    if transport == "stdio":
        from kbc.serve.mcp import serve_stdio

        serve_stdio(workspace)
        return
    from kbc.serve.http import serve_http

    serve_http(workspace, host, port, token)
