"""`kbc serve` over HTTP against clients that open connections and never finish a request."""

from __future__ import annotations

import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from helpers import LEXICAL
from web import built_repository, free_port

from kbc.serve.protocol import HEAD_SECONDS

DESCRIPTORS = 256  # the server's limit: far fewer than the half-open connections below


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (DESCRIPTORS, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


@pytest.mark.slow
def test_half_open_requests_are_dropped_and_a_new_client_is_served(tmp_path: Path) -> None:
    with built_repository(tmp_path, {"shop/__init__.py": "", "shop/orders.py": "LIMIT = 1\n"}) as root:
        port = free_port()
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kbc",
                *LEXICAL,
                "serve",
                "--repo",
                str(root),
                "--transport",
                "http",
                "--port",
                str(port),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_limited,
        )
        url = f"http://127.0.0.1:{port}"
        slow: list[socket.socket] = []
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    if httpx.get(f"{url}/api/v1/health", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.2)
            opened = time.monotonic()
            for _ in range(3 * DESCRIPTORS):  # more than the server could ever hold
                try:
                    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
                    sock.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never ended
                    slow.append(sock)
                except OSError:
                    break
            while time.monotonic() - opened < HEAD_SECONDS + 2:  # a byte now and then: still no head
                for sock in slow:
                    try:
                        sock.send(b"X")
                    except OSError:
                        pass
                time.sleep(1)
            answer = httpx.get(f"{url}/api/v1/health", timeout=10)
            assert answer.status_code == 200
            closed = 0
            for sock in slow:
                sock.settimeout(0.5)
                try:
                    closed += sock.recv(1) == b""
                except OSError:
                    closed += 1
            assert closed == len(slow)  # every half-open request was let go
        finally:
            for sock in slow:
                sock.close()
            server.terminate()
            server.wait(timeout=30)
