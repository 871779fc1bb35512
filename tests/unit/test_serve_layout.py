"""Serving lives in kbc.serve; stdio MCP starts without kbc's HTTP app (its REST API, pages,
webhooks and the Prometheus client are never imported)."""

from __future__ import annotations

import subprocess
import sys

import pytest

HTTP_ONLY = (
    "kbc.serve.http",
    "kbc.serve.api",
    "kbc.serve.pages",
    "kbc.serve.hooks",
    "kbc.serve.security",
    "prometheus_client",
)


@pytest.mark.slow
def test_stdio_mcp_loads_none_of_the_http_app() -> None:
    code = (
        "import sys\n"
        "from kbc.serve.run import serve\n"
        "from kbc.serve.mcp import build_server, serve_stdio\n"
        "from kbc.serve.worker import Worker\n"
        f"print(sorted(m for m in {HTTP_ONLY!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "[]"
