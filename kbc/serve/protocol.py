"""The HTTP connections `kbc serve` accepts: a request's head within a time limit, and no more
connections than the process can hold.

uvicorn closes an idle keep-alive connection, but it waits for ever on a connection that
sends the head of a request a byte at a time, or never finishes it (the "slowloris" way to
fill a server's descriptor table before any token is checked). Here a connection that has
not sent a whole request head within :data:`HEAD_SECONDS` of opening (or of its previous
response) is closed, and past :data:`max_connections` a new connection is closed at once,
so a fresh client always finds room once the slow ones have timed out. A body is read by
the REST layer within its own limit (:data:`kbc.serve.api.BODY_SECONDS`).
"""

from __future__ import annotations

import asyncio
from typing import Any

HEAD_SECONDS = 10.0  # to send a request's method, path and headers
SPARE_DESCRIPTORS = 64  # kept for the files, databases and sockets the server itself opens
MOST_CONNECTIONS = 4_096


def max_connections() -> int:
    """Connections open at once: what the descriptor limit leaves, at most MOST_CONNECTIONS."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MOST_CONNECTIONS
    return max(16, min(MOST_CONNECTIONS, soft - SPARE_DESCRIPTORS))


def guarded_protocol() -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with the head time limit and the connection cap."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    limit = max_connections()

    class Guarded(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > limit:
                transport.close()
                return
            self._arm()

        def _arm(self) -> None:
            self._disarm()
            self._head_timer = self.loop.call_later(HEAD_SECONDS, self._head_too_slow)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_too_slow(self) -> None:
            self._head_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:
                self._disarm()  # the head is in: the request is under way

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return Guarded


def server_config(app: Any, host: str, port: int, **options: Any) -> Any:
    """The uvicorn configuration `kbc serve` runs ``app`` with."""
    import uvicorn

    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="on",
        http=guarded_protocol(),
        **options,
    )
