"""Who may talk to the HTTP server: the bind rule, the bearer token and the Host check.

- Bound to loopback, no token is needed; bound beyond it, a token is required to start.
- With a token, every request carries ``Authorization: Bearer <token>``, or (a browser) the
  cookie the login page sets from it. API and MCP requests without it get a JSON 401; a page
  asked for by a browser is sent to the login page.
- Bound to loopback, a request whose ``Host`` (or, when it writes, ``Origin``) is not a
  loopback name is refused: a web page cannot reach the server by rebinding a DNS name.
- A request that runs a query (it is logged, and an answer may call the user's LLM with the
  user's key) is refused when a browser says another site sent it (``Sec-Fetch-Site``): an
  ``<img src=".../ask?q=...">`` on any page would otherwise run it.
"""

from __future__ import annotations

import hmac
import json
from urllib.parse import quote, urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from kbc.domain.errors import ConfigError, FieldError
from kbc.domain.places import is_loopback

COOKIE = "kbc_token"
MIN_TOKEN_CHARS = 16  # of a bearer token that guards a bind beyond loopback
_SECRET = (
    "a long random secret without spaces, e.g. the output of "
    "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`"
)
# Paths a client with no token may open: the login page and what it is drawn with.
OPEN_PATHS = ("/login", "/static/", "/api/v1/hooks/")  # webhooks prove themselves by signature
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
# GET paths that run a query when asked one (their query string): only kbc's own pages may send them.
QUERYING = ("/ask", "/slice", "/search", "/api/v1/search")


def check_bind(host: str, port: int, token: str | None) -> None:
    """Refuse to start where the knowledge base would be exposed without a good token."""
    if not 0 < port < 65536:
        raise ConfigError(
            [
                FieldError(
                    "--port", "serve.port", f"{port} is not a TCP port", "give a port between 1 and 65535"
                )
            ]
        )
    if token and token != token.strip():
        raise ConfigError(
            [
                FieldError(
                    "KBC_TOKEN",
                    "serve.token",
                    "the token is blank or has white space around it, which no "
                    "client can send back in an Authorization header",
                    f"set KBC_TOKEN to {_SECRET}",
                )
            ]
        )
    if token and not is_loopback(host) and len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(
            [
                FieldError(
                    "KBC_TOKEN",
                    "serve.token",
                    f"a {len(token)}-character token guards a bind beyond this "
                    f"machine ({host}); it must have at least {MIN_TOKEN_CHARS} characters",
                    f"set KBC_TOKEN to {_SECRET}",
                )
            ]
        )
    if not token and not is_loopback(host):
        raise ConfigError(
            [
                FieldError(
                    "--host",
                    "serve.host",
                    f"binding {host} exposes the knowledge base beyond this machine, "
                    "so a bearer token is required",
                    "set KBC_TOKEN to a long random secret (clients send 'Authorization: Bearer <token>'), "
                    "or bind 127.0.0.1",
                )
            ]
        )


def _header(scope: Scope, name: bytes) -> bytes:
    return next((bytes(value) for key, value in scope["headers"] if key.lower() == name), b"")


def _cookie(scope: Scope, name: str) -> str:
    for part in _header(scope, b"cookie").decode("latin-1").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return ""


def token_matches(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode(), token.encode())


def _host_name(value: str) -> str:
    """The host of a Host header or an Origin, without the port."""
    if "//" not in value:
        value = "//" + value
    try:
        return (urlsplit(value).hostname or "").lower()
    except ValueError:
        return ""


class Guard:
    """ASGI middleware enforcing the rules above for every HTTP request."""

    def __init__(self, app: ASGIApp, *, token: str | None, loopback: bool) -> None:
        self.app = app
        self.token = token
        self.loopback = loopback

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if self.loopback and not self._local(scope):
            await _send_json(
                send,
                421,
                {
                    "error": "this server answers only requests addressed to "
                    "this machine (Host or Origin is not a loopback name)",
                    "hint": "open it as http://127.0.0.1:<port>/",
                },
            )
            return
        path = str(scope.get("path", ""))
        if (
            path in QUERYING
            and scope.get("query_string")
            and _header(scope, b"sec-fetch-site") in (b"cross-site", b"same-site")
        ):
            await _send_json(
                send,
                403,
                {
                    "error": "another site's page may not run a query here",
                    "hint": "ask from kbc's own pages, or from a client that is not a browser",
                },
            )
            return
        if self.token and not path.startswith(OPEN_PATHS) and not self._authorized(scope):
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            elif _wants_page(scope, path):
                await _redirect(send, "/login?next=" + quote(path, safe="/"))
            elif path.startswith("/mcp"):
                await _send_json(
                    send,
                    401,
                    {
                        "jsonrpc": "2.0",
                        "id": None,
                        "error": {
                            "code": -32001,
                            "message": "unauthorized: missing or wrong bearer token "
                            "(send the header 'Authorization: Bearer <KBC_TOKEN>')",
                        },
                    },
                    challenge=True,
                )
            else:
                await _send_json(
                    send,
                    401,
                    {
                        "error": "unauthorized: missing or wrong bearer token",
                        "hint": "send the header 'Authorization: Bearer <KBC_TOKEN>'",
                    },
                    challenge=True,
                )
            return
        await self.app(scope, receive, send)

    def _local(self, scope: Scope) -> bool:
        host = _host_name(_header(scope, b"host").decode("latin-1"))
        if host.strip("[]") not in LOOPBACK_NAMES and not is_loopback(host):
            return False
        origin = _header(scope, b"origin").decode("latin-1")
        if origin and origin != "null":
            name = _host_name(origin)
            return name.strip("[]") in LOOPBACK_NAMES or is_loopback(name)
        return True

    def _authorized(self, scope: Scope) -> bool:
        assert self.token is not None
        scheme, _, credential = _header(scope, b"authorization").partition(b" ")
        # The digest is compared whatever the scheme, so the time says nothing about either.
        by_header = hmac.compare_digest(credential.strip(), self.token.encode())
        by_header = by_header and scheme.lower() == b"bearer"
        return by_header or token_matches(_cookie(scope, COOKIE), self.token)


def _wants_page(scope: Scope, path: str) -> bool:
    if path.startswith(("/api/", "/mcp", "/metrics")) or scope.get("method") != "GET":
        return False
    return b"text/html" in _header(scope, b"accept")


async def _send_json(send: Send, status: int, data: object, *, challenge: bool = False) -> None:
    body = json.dumps(data).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if challenge:
        headers.append((b"www-authenticate", b'Bearer realm="kbc", error="invalid_token"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _redirect(send: Send, location: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 303,
            "headers": [(b"location", location.encode()), (b"content-length", b"0")],
        }
    )
    await send({"type": "http.response.body", "body": b""})
