"""A remote that hangs: a loopback TCP server that accepts every connection and never answers,
counting the connections it accepted and telling which of them the client has closed."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class SilentServer:
    def __init__(self) -> None:
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self._listener.settimeout(0.1)
        self.port = int(self._listener.getsockname()[1])
        self._connections: list[socket.socket] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="silent-server", daemon=True)
        self._thread.start()

    def url(self, userinfo: str = "") -> str:
        """A git URL on this server (``userinfo``: ``user:password`` put in it)."""
        return f"http://{userinfo + '@' if userinfo else ''}127.0.0.1:{self.port}/repo.git"

    @property
    def accepted(self) -> int:
        with self._lock:
            return len(self._connections)

    def still_open(self) -> int:
        """The accepted connections the client has not closed (what it sent is read and dropped)."""
        with self._lock:
            connections = list(self._connections)
        return sum(1 for connection in connections if not _closed_by_peer(connection))

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                self._connections.append(connection)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._listener.close()
        with self._lock:
            for connection in self._connections:
                connection.close()


def _closed_by_peer(connection: socket.socket) -> bool:
    connection.setblocking(False)
    try:
        while connection.recv(65536):
            pass
    except BlockingIOError:
        return False  # nothing more to read, and not closed
    except OSError:
        return True  # reset
    return True


@contextmanager
def silent_server() -> Iterator[SilentServer]:
    server = SilentServer()
    try:
        yield server
    finally:
        server.close()
