"""The MCP server through the official client: over stdio and over streamable HTTP."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from helpers import repo_factory
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent

from kbc.domain.errors import ConfigError, KbcError
from kbc.domain.places import is_loopback
from kbc.serve.run import serve
from kbc.services.components import Components
from kbc.services.knowledge import KnowledgeBase

TOOLS = {
    "retrieve_slice",
    "ask",
    "search",
    "get_view",
    "list_views",
    "get_symbol",
    "get_file",
    "list_scopes",
    "propose_update",
    "list_proposals",
    "list_use_cases",
    "report_usage",
    "list_repositories",
    "refresh",
}

TOOL_LIST_TOKENS = 3_000  # the tool list's budget (cl100k tokens of each tool as JSON)
SECRET = "2hpChYgCfrL1spNxnyVmihA+2O76UMFxFkM+R5Kj"
SHOP = {
    "shop/__init__.py": '"""A small shop: orders, payments and refunds."""\n',
    "shop/payments.py": '''
        """Payments and refunds."""


        def validate_refund(amount: int, paid: int) -> bool:
            """A refund is valid when it is positive and not more than what was paid."""
            return 0 < amount <= paid


        def refund(order_id: str, amount: int, paid: int) -> str:
            """Refund part of an order after validating the amount."""
            if not validate_refund(amount, paid):
                raise ValueError("invalid refund")
            return f"refunded {amount} on {order_id}"
    ''',
    "shop/orders.py": '''
        """Orders placed by customers."""
        from shop.payments import refund


        def cancel(order_id: str, paid: int) -> str:
            """Cancel an order and refund everything that was paid."""
            return refund(order_id, paid, paid)
    ''',
    "shop/settings.py": f'''
        """Deployment settings."""
        AWS_ACCESS_KEY_ID = "AKIAUJZDEGXDNCF32EPF"
        AWS_SECRET_ACCESS_KEY = "{SECRET}"
    ''',
    ".gitignore": "local.env\n",
    "local.env": "DEBUG=1\n",
}

# A server over a lexical knowledge base (the components a test gives, not the environment).
PRELUDE = (
    "import sys\nfrom kbc.services.components import Components\n"
    "from kbc.services.knowledge import KnowledgeBase\nfrom kbc.serve.run import serve\n"
    "kb = KnowledgeBase(sys.argv[1], components=Components.lexical())\n"
)
SERVE_STDIO = PRELUDE + "serve(kb, 'stdio')\n"
SERVE_HTTP = PRELUDE + "serve(kb, 'http', '127.0.0.1', int(sys.argv[2]), sys.argv[3] or None)\n"
TOKEN = "s3cret-token-for-tests"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A built knowledge base (lexical retrieval, no LLM) with an untracked and an ignored file."""
    with pytest.MonkeyPatch.context() as mp:
        for key in [k for k in os.environ if k.startswith("KBC_")]:
            mp.delenv(key)
        root = repo_factory(tmp_path_factory.mktemp("mcp"))(SHOP)
        (root / "notes.txt").write_text("scratch notes, never committed\n", encoding="utf-8")
        with KnowledgeBase(root, components=Components.lexical()) as kb:
            kb.build(no_llm=True)
        yield root


def server_env() -> dict[str, str]:
    """The environment of a server process: none of the test runner's kbc settings."""
    return {k: v for k, v in os.environ.items() if not k.startswith("KBC_")}


def data(result: CallToolResult) -> Any:
    """The structured result of a successful call (a list tool's sits under "result"),
    checked against the JSON in its text block."""
    assert not result.is_error, result.content
    assert isinstance(result.content[0], TextContent)
    structured = result.structured_content
    assert structured is not None
    plain = structured["result"] if set(structured) == {"result"} else structured
    if isinstance(plain, dict) and {"text", "items", "query_id"} <= set(plain):  # a slice: its text
        assert [c.text for c in result.content] == [f"{plain['text']}\n\nquery_id: {plain['query_id']}"]
    else:
        assert json.loads(result.content[0].text) == plain
    return plain


def read_tokens(result: CallToolResult) -> int:
    """The tokens of everything a client reads of a result (its text content)."""
    counter = Components.lexical().token_counter()
    return sum(counter.count(c.text) for c in result.content if isinstance(c, TextContent))


def error_text(result: CallToolResult) -> str:
    assert result.is_error
    assert isinstance(result.content[0], TextContent)
    return result.content[0].text


async def exercise(session: ClientSession) -> None:
    """List the tools and call each one, asserting real content."""
    listed = await session.list_tools()
    assert {t.name for t in listed.tools} == TOOLS and len(listed.tools) == len(TOOLS)
    assert all(t.description and t.output_schema for t in listed.tools)
    # what every agent turn pays for the tool list: names, descriptions, schemas, annotations
    counter = Components.lexical().token_counter()
    listing = [json.dumps(t.model_dump(mode="json", by_alias=True, exclude_none=True)) for t in listed.tools]
    assert sum(counter.count(text) for text in listing) <= TOOL_LIST_TOKENS
    assert '"title"' not in "".join(listing) and '"anyOf"' not in "".join(listing)

    found = data(await session.call_tool("retrieve_slice", {"task": "validate the refund amount"}))
    assert found["use_case"] == "implementation" and found["retrieval"] == "lexical"
    assert found["tokens"] <= found["budget"]
    paths = [item["path"] for item in found["items"]]
    assert "shop/payments.py" in paths
    assert all(1 <= item["start_line"] <= item["end_line"] for item in found["items"])
    assert "def validate_refund" in found["text"]
    used = [item["id"] for item in found["items"] if item["path"] == "shop/payments.py"]
    recorded = await session.call_tool("report_usage", {"query_id": found["query_id"], "helpful_ids": used})
    assert data(recorded) == {"recorded": True}
    unknown = await session.call_tool("report_usage", {"query_id": "no-such-query", "helpful_ids": []})
    assert data(unknown) == {"recorded": False}

    asked = await session.call_tool(
        "retrieve_slice", {"task": "refunds", "use_case": "review", "budget": 300}
    )
    small = data(asked)
    assert small["use_case"] == "review" and small["budget"] <= 300 and small["tokens"] <= small["budget"]
    assert read_tokens(asked) <= 300  # the slice and its query_id line: what the client reads
    assert f"query_id: {small['query_id']}" in asked.content[0].text

    answer = data(await session.call_tool("ask", {"question": "how are refunds validated?"}))
    assert answer["mode"] == "extractive" and answer["query_id"]
    assert "shop/payments.py" in {c["path"] for c in answer["citations"]}

    hits = data(await session.call_tool("search", {"query": "validate_refund", "k": 2}))
    assert 1 <= len(hits) <= 2
    assert hits[0]["path"] == "shop/payments.py" and "def validate_refund" in hits[0]["text"]

    views = data(await session.call_tool("list_views", {}))
    assert "architecture" in {v["id"] for v in views}
    assert all(set(v) == {"id", "kind", "title", "source"} for v in views)
    modules = data(await session.call_tool("list_views", {"kind": "module"}))
    assert modules and {v["kind"] for v in modules} == {"module"}

    architecture = data(await session.call_tool("get_view", {"id": "architecture"}))
    assert architecture["kind"] == "architecture"
    assert architecture["facts"]["python_files"] == 4
    assert "shop" in {m["name"] for m in architecture["facts"]["modules"]}
    assert architecture["interpretation"]["overview"]

    symbols = data(await session.call_tool("get_symbol", {"name": "validate_refund"}))
    assert [s["location"] for s in symbols] == ["shop/payments.py:4-6"]
    assert symbols[0]["symbol"]["qname"] == "shop.payments.validate_refund"
    assert "shop.payments.refund" in {c["qname"] for c in symbols[0]["callers"]}

    lines = data(await session.call_tool("get_file", {"path": "shop/payments.py", "start": 4, "end": 6}))
    assert (lines["start_line"], lines["end_line"]) == (4, 6)
    assert lines["text"].splitlines() == [
        "def validate_refund(amount: int, paid: int) -> bool:",
        '    """A refund is valid when it is positive and not more than what was paid."""',
        "    return 0 < amount <= paid",
    ]

    cases = data(await session.call_tool("list_use_cases", {}))
    names = {c["name"] for c in cases}
    assert {"implementation", "qa", "review"} <= names
    assert all(isinstance(c["budget"], int) and c["description"] for c in cases)

    # A KbcError comes back as a tool error carrying its message and hint.
    missing = error_text(await session.call_tool("get_view", {"id": "nowhere"}))
    assert missing == str(KbcError("no view 'nowhere'", hint="list_views / `kbc views` lists them"))
    bad_case = error_text(await session.call_tool("retrieve_slice", {"task": "x", "use_case": "nope"}))
    assert bad_case.startswith("no use case named 'nope'") and "implementation" in bad_case


async def refusals(session: ClientSession) -> None:
    """get_file serves tracked files only, a file holding a credential redacted."""
    expected = {
        "../etc/passwd": "paths that climb out with '..' are refused",
        "/etc/passwd": "absolute paths are refused",
        "notes.txt": "not a tracked text file",
        "local.env": "not a tracked text file",
    }
    for path, reason in expected.items():
        text = error_text(await session.call_tool("get_file", {"path": path}))
        assert reason in text, (path, text)
        assert "→" in text  # the hint says what to do instead
        assert SECRET not in text and "root:" not in text
    settings = data(await session.call_tool("get_file", {"path": "shop/settings.py"}))
    assert SECRET not in settings["text"] and "[REDACTED]" in settings["text"] and settings["lines"] == 3
    # ... and still answers afterwards.
    assert data(await session.call_tool("get_file", {"path": "shop/__init__.py"}))["lines"] == 1


async def concurrently(session: ClientSession) -> None:
    """Calls in flight together all succeed (the store's connections stay on one thread)."""
    results: list[CallToolResult] = []

    async def one(query: str) -> None:
        results.append(await session.call_tool("search", {"query": query, "k": 1}))

    async with anyio.create_task_group() as group:
        for query in ("refund", "cancel order", "validate amount", "payments") * 2:
            group.start_soon(one, query)
    assert len(results) == 8 and all(len(data(r)) == 1 for r in results)


def run(main: Callable[[], Awaitable[None]]) -> None:
    anyio.run(main)


# -- stdio ------------------------------------------------------------------


@pytest.mark.slow
def test_tools_over_stdio(repo: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-c", SERVE_STDIO, str(repo)], env=server_env()
    )

    async def main() -> None:
        with (repo.parent / "stdio-server.log").open("w") as log:
            async with (
                stdio_client(params, errlog=log) as (read, write),
                ClientSession(read, write) as session,
            ):
                info = await session.initialize()
                assert info.server_info.name == "kbc" and info.instructions
                await exercise(session)
                await refusals(session)

    run(main)


# -- streamable HTTP -----------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(server: subprocess.Popen[bytes], port: int, log_path: Path) -> None:
    """Until the server accepts connections on ``port`` (a loaded machine starts it slowly)."""
    deadline = time.monotonic() + 90
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(log_path.read_text()) from None
            time.sleep(0.1)


@pytest.fixture
def http_server(repo: Path, tmp_path: Path) -> Iterator[str]:
    """The server on a free loopback port with a bearer token; yields its URL."""
    port = free_port()
    log_path = tmp_path / "http-server.log"
    with log_path.open("w") as log:
        server = subprocess.Popen(
            [sys.executable, "-c", SERVE_HTTP, str(repo), str(port), TOKEN],
            env=server_env(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
    try:
        wait_for(server, port, log_path)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        try:
            code = server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
            raise
    assert code == 0, log_path.read_text()
    assert "kbc on http://127.0.0.1:" in log_path.read_text()


def raw_post(url: str, token: str | None) -> tuple[int, dict[str, Any], str]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, {}, response.headers.get("WWW-Authenticate", "")
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read()), error.headers.get("WWW-Authenticate", "")


async def connect(url: str, token: str | None, work: Callable[[ClientSession], Awaitable[None]]) -> None:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await work(session)


@pytest.mark.slow
def test_tools_over_http_with_a_bearer_token(http_server: str) -> None:
    async def main() -> None:
        await connect(http_server, TOKEN, exercise)
        await connect(http_server, TOKEN, refusals)
        await connect(http_server, TOKEN, concurrently)

    run(main)


@pytest.mark.slow
def test_http_refuses_a_missing_or_wrong_token(http_server: str) -> None:
    for token in (None, "wrong-token", TOKEN + "x", ""):
        status, body, challenge = raw_post(http_server, token)
        assert status == 401, token
        assert challenge.startswith("Bearer")
        assert "bearer token" in body["error"]["message"]

    async def nothing(session: ClientSession) -> None:
        raise AssertionError("the session should not have started")

    for token in (None, "wrong-token"):
        with pytest.raises(ExceptionGroup) as refused:  # the client's task groups wrap the error
            run(lambda token=token: connect(http_server, token, nothing))
        assert refused.group_contains(MCPError, match="unauthorized: missing or wrong bearer token")

    async def ping(session: ClientSession) -> None:
        await session.send_ping()

    run(lambda: connect(http_server, TOKEN, ping))


# -- exposure ----------------------------------------------------------------


def test_binding_beyond_loopback_needs_a_token(repo: Path) -> None:
    kb = KnowledgeBase(repo, components=Components.lexical())
    for host in ("0.0.0.0", "::", "192.0.2.10", "kbc.example.com"):
        for token in (None, ""):
            with pytest.raises(ConfigError) as refused:
                serve(kb, "http", host, free_port(), token)
            message = str(refused.value)
            assert f"binding {host}" in message and "bearer token is required" in message
            assert "KBC_TOKEN" in message and "127.0.0.1" in message
    with pytest.raises(ConfigError, match="at least 16 characters"):
        serve(kb, "http", "0.0.0.0", free_port(), "a")
    for blank in ("   ", " s3cret-token-for-tests-padded "):
        with pytest.raises(ConfigError, match="white space around it"):
            serve(kb, "http", "127.0.0.1", free_port(), blank)
    with pytest.raises(KbcError, match="unknown transport 'carrier-pigeon'"):
        serve(kb, "carrier-pigeon")
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost", "LOCALHOST"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "10.0.0.1", "example.com", ""))


def test_kbc_serve_refuses_an_open_bind_without_a_token(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from kbc.cli.main import cli

    monkeypatch.delenv("KBC_TOKEN", raising=False)
    arguments = ["serve", "--repo", str(repo), "--transport", "http", "--host", "0.0.0.0"]
    result = CliRunner().invoke(cli, arguments)
    assert result.exit_code == 2
    assert "bearer token is required" in result.output and "KBC_TOKEN" in result.output


def _initialize(url: str, session: str | None = None) -> tuple[int, str]:
    """A raw ``initialize`` (or, with ``session``, a ping in it): (status, session id)."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "careless", "version": "0"},
        },
    }
    if session is not None:
        body = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if session is not None:
        headers["Mcp-Session-Id"] = session
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()
            return response.status, response.headers.get("Mcp-Session-Id", "")
    except urllib.error.HTTPError as error:
        with error:
            return error.code, ""


@pytest.mark.slow
def test_abandoned_http_sessions_are_bounded_and_closed_when_idle(repo: Path, tmp_path: Path) -> None:
    port = free_port()
    log_path = tmp_path / "sessions.log"
    env = {**server_env(), "KBC_MAX_SESSIONS": "2", "KBC_SESSION_IDLE_SECONDS": "1"}
    serve_http = PRELUDE + "serve(kb, 'http', '127.0.0.1', int(sys.argv[2]))\n"
    with log_path.open("w") as log:
        server = subprocess.Popen(
            [sys.executable, "-c", serve_http, str(repo), str(port)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_for(server, port, log_path)
        first, second = _initialize(url), _initialize(url)  # opened, never ended
        assert first[0] == second[0] == 200 and first[1] and second[1]
        assert _initialize(url)[0] == 503  # at the limit: refused, the server does not grow
        time.sleep(2.5)  # both idle past the timeout
        assert _initialize(url, first[1])[0] == 404  # closed
        assert _initialize(url)[0] == 200  # room again
    finally:
        server.terminate()
        server.wait(timeout=15)


def test_the_readme_and_the_agents_guide_name_every_tool() -> None:
    root = Path(__file__).resolve().parents[2]
    for document in ("README.md", "docs/agents.md"):
        text = (root / document).read_text(encoding="utf-8")
        assert {tool for tool in TOOLS if f"`{tool}" not in text} == set(), document
