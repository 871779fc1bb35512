"""The REST API and the metrics, over a real server on loopback: the same bodies as the CLI's
``--format json``, the OpenAPI document, errors as JSON, the token and Host rules."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from helpers import LEXICAL
from web import SECRET, STORE, TOKEN, built_repository, running

from kbc import __version__
from kbc.cli.main import cli
from kbc.domain.settings import load_settings
from kbc.serve.api import ENDPOINTS, openapi_document
from kbc.serve.mcp import QUERY_ID_TOKENS
from kbc.services.components import Components
from kbc.services.knowledge import KnowledgeBase

TASK = "how is a refund validated when an order is cancelled?"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with built_repository(tmp_path_factory.mktemp("rest"), STORE) as root:
        (root / "scratch.txt").write_text("never committed\n", encoding="utf-8")
        yield root


def lexical(repo: Path) -> KnowledgeBase:
    """The knowledge base the CLI opens with ``-c index.embed_model=none``."""
    return KnowledgeBase(repo, settings=load_settings(repo, assignments=[LEXICAL[1]]))


@pytest.fixture(scope="module")
def url(repo: Path) -> Iterator[str]:
    with running(lexical(repo)) as found:
        yield found


def cli_json(repo: Path, *args: str) -> Any:
    result = CliRunner().invoke(cli, [*LEXICAL, *args, "--repo", str(repo), "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_retrieve_gives_the_cli_slice_and_a_query_id(repo: Path, url: str) -> None:
    reply = httpx.post(f"{url}/api/v1/retrieve", json={"task": TASK, "budget": 1500})
    assert reply.status_code == 200 and reply.headers["content-type"] == "application/json"
    body = reply.json()
    query_id = body.pop("query_id")
    assert len(query_id) == 16
    assert body == cli_json(repo, "retrieve", TASK, "--budget", "1500")
    assert body["tokens"] <= 1500 and body["retrieval"] == "lexical"
    assert any(item["path"] == "store/payments/refunds.py" for item in body["items"])
    used = httpx.post(f"{url}/api/v1/usage", json={"query_id": query_id, "helpful_ids": []})
    assert used.json() == {"recorded": True}


@pytest.mark.parametrize(
    ("path", "command"),
    [
        ("/api/v1/status", ("status",)),
        ("/api/v1/views", ("views",)),
        ("/api/v1/views?kind=module", ("views", "--kind", "module")),
        ("/api/v1/symbols?name=validate_refund", ("symbols", "validate_refund")),
        ("/api/v1/drift", ("drift",)),
    ],
)
def test_bodies_are_the_cli_json(repo: Path, url: str, path: str, command: tuple[str, ...]) -> None:
    reply = httpx.get(url + path)
    assert reply.status_code == 200, reply.text
    assert reply.json() == cli_json(repo, *command)


def test_views_search_files_use_cases_gaps_and_health(repo: Path, url: str) -> None:
    view = httpx.get(f"{url}/api/v1/views/module:store.payments").json()
    assert view["id"] == "module:store.payments" and view["kind"] == "module"
    hits = httpx.get(f"{url}/api/v1/search", params={"q": "refund window closed", "k": 3}).json()
    assert len(hits) == 3 and "store/payments/refunds.py" in {hit["path"] for hit in hits}
    lines = httpx.get(f"{url}/api/v1/files/store/payments/refunds.py", params={"start": 3, "end": 3}).json()
    assert lines == {
        "path": "store/payments/refunds.py",
        "start_line": 3,
        "end_line": 3,
        "lines": 17,
        "text": "MAX_REFUND_DAYS = 30\n",
    }
    settings = httpx.get(f"{url}/api/v1/files/store/settings.py")  # a credential: served redacted
    assert settings.status_code == 200 and SECRET not in settings.text
    assert settings.json()["text"].count("[REDACTED]") == 2
    cases = httpx.get(f"{url}/api/v1/use-cases").json()
    assert {"implementation", "qa", "architecture"} <= {c["name"] for c in cases}
    assert isinstance(httpx.get(f"{url}/api/v1/gaps").json(), list)
    assert httpx.get(f"{url}/api/v1/health").json() == {
        "ok": True,
        "version": __version__,
        "built": True,
        "repositories": 1,
    }


def test_ask_answers_with_citations_inside_its_sources(url: str) -> None:
    body = httpx.post(f"{url}/api/v1/ask", json={"question": "how are refunds validated?"}).json()
    assert body["mode"] == "extractive" and body["citations"] and len(body["query_id"]) == 16
    sources = {(s["path"], s["start_line"], s["end_line"]) for s in body["sources"]}
    assert {(c["path"], c["start_line"], c["end_line"]) for c in body["citations"]} <= sources


@pytest.mark.parametrize(
    ("path", "status", "words"),
    [
        ("/api/v1/files/scratch.txt", 403, "not a tracked text file"),
        ("/api/v1/files/store/%2E%2E/%2E%2E/etc/passwd", 403, "climb out"),
        ("/api/v1/nothing-here", 404, "no endpoint GET /api/v1/nothing-here"),
        ("/api/v1/files/%2Fetc%2Fpasswd", 403, "absolute paths are refused"),
        ("/api/v1/views/module:nope", 404, "no view 'module:nope'"),
        ("/api/v1/symbols?name=no_such_thing", 404, "no symbol named"),
        ("/api/v1/search", 400, "q is required"),
        ("/api/v1/files/store/payments/refunds.py?start=x", 400, "start must be an integer"),
    ],
)
def test_errors_are_json_with_a_hint(url: str, path: str, status: int, words: str) -> None:
    reply = httpx.get(url + path)
    assert reply.status_code == status, reply.text
    body = reply.json()
    assert set(body) == {"error", "hint"} and words in body["error"]
    assert SECRET not in reply.text


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"task": "x", "use_case": "nope"}, "no use case named 'nope'"),
        ({"task": ""}, "task: String should have at least 1 character"),
        ({"task": "x", "budget": 0}, "budget: Input should be greater than 0"),
        ({"task": "x", "colour": "blue"}, "colour: Extra inputs are not permitted"),
    ],
)
def test_a_bad_request_body_says_which_field(url: str, body: dict[str, Any], words: str) -> None:
    reply = httpx.post(f"{url}/api/v1/retrieve", json=body)
    assert reply.status_code == 400 and words in reply.json()["error"], reply.text


def test_a_body_that_is_not_json_is_refused(url: str) -> None:
    """A web page can post text/plain without a preflight; the API only reads JSON."""
    reply = httpx.post(
        f"{url}/api/v1/retrieve", content=json.dumps({"task": "x"}), headers={"content-type": "text/plain"}
    )
    assert reply.status_code == 400 and "must be JSON" in reply.json()["error"]


def test_the_openapi_document_is_valid_and_describes_every_route(url: str) -> None:
    from openapi_spec_validator import validate

    served = httpx.get(f"{url}/api/v1/openapi.json").json()
    assert served == openapi_document()
    validate(served)
    documented = {(method.upper(), path) for path, item in served["paths"].items() for method in item}
    declared = {(e.method, "/api/v1" + e.path) for e in ENDPOINTS}
    assert documented == declared | {("GET", "/api/v1/openapi.json"), ("POST", "/api/v1/hooks/push")}
    for endpoint in ENDPOINTS:
        if endpoint.method == "GET" and not any(p.required for p in endpoint.params):
            assert httpx.get(f"{url}/api/v1{endpoint.path}").status_code == 200, endpoint.path


def test_a_request_for_another_host_is_refused_on_loopback(url: str) -> None:
    """DNS rebinding: a page of evil.example resolved to 127.0.0.1 must not read the API."""
    assert httpx.get(f"{url}/api/v1/health", headers={"host": "evil.example"}).status_code == 421
    assert (
        httpx.post(
            f"{url}/api/v1/retrieve", json={"task": "x"}, headers={"origin": "http://evil.example"}
        ).status_code
        == 421
    )
    assert httpx.get(f"{url}/api/v1/health", headers={"host": "localhost:1"}).status_code == 200


def test_beyond_loopback_every_request_needs_the_token(repo: Path) -> None:
    with running(KnowledgeBase(repo, components=Components.lexical()), host="0.0.0.0", token=TOKEN) as url:
        for path in ("/api/v1/health", "/metrics", "/api/v1/openapi.json"):
            refused = httpx.get(url + path)
            assert refused.status_code == 401 and "bearer token" in refused.json()["error"], path
        assert httpx.post(f"{url}/mcp", json={}).status_code == 401
        wrong = httpx.get(f"{url}/api/v1/health", headers={"authorization": "Bearer " + TOKEN[:-1] + "x"})
        assert wrong.status_code == 401
        good = {"authorization": f"Bearer {TOKEN}"}
        assert httpx.get(f"{url}/api/v1/health", headers=good).status_code == 200
        page = httpx.get(f"{url}/view/architecture", headers={"accept": "text/html"})
        assert page.status_code == 303 and page.headers["location"] == "/login?next=/view/architecture"
        signed = httpx.post(f"{url}/login", data={"token": TOKEN, "next": "//evil.example/"})
        assert signed.status_code == 303 and signed.headers["location"] == "/"
        cookie = signed.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie
        with httpx.Client(base_url=url, cookies=signed.cookies) as browser:
            assert browser.get("/view/architecture", headers={"accept": "text/html"}).status_code == 200
        assert httpx.post(f"{url}/login", data={"token": "guess", "next": "/"}).status_code == 401
        # The login page says nothing of the repository to whoever reaches it.
        commit = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        for login in (httpx.get(f"{url}/login"), httpx.post(f"{url}/login", data={"token": "guess"})):
            assert repo.name not in login.text and commit[:12] not in login.text, login.text[-400:]


def metric(text: str, name: str, **labels: str) -> float:
    """The value of one sample of the exposition ``text`` (0 when absent)."""
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return float(sample.value)
    return 0.0


def test_metrics_count_requests_tools_slices_gaps_and_the_index(repo: Path) -> None:
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    kb = KnowledgeBase(repo, components=Components.lexical())
    kb.refresh(no_llm=True)
    with running(kb) as url:
        slice_ = httpx.post(f"{url}/api/v1/retrieve", json={"task": TASK, "budget": 1000}).json()
        httpx.post(f"{url}/api/v1/usage", json={"query_id": slice_["query_id"], "helpful_ids": []})
        httpx.get(f"{url}/api/v1/views/module:nope")

        async def call_tool() -> int:
            async with (
                streamable_http_client(f"{url}/mcp") as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                found = await session.call_tool("retrieve_slice", {"task": TASK, "budget": 800})
                await session.call_tool("get_file", {"path": "scratch.txt"})  # untracked: an error
                assert found.structured_content is not None
                return int(found.structured_content["tokens"])

        tool_tokens = anyio.run(call_tool)
        text = httpx.get(f"{url}/metrics").text
        status = kb.status()
    assert metric(text, "kbc_http_requests_total", endpoint="/api/v1/retrieve", status="200") == 1
    assert metric(text, "kbc_http_requests_total", endpoint="/api/v1/views", status="404") == 1
    assert metric(text, "kbc_http_request_seconds_count", endpoint="/api/v1/retrieve") == 1
    assert metric(text, "kbc_mcp_tool_calls_total", tool="retrieve_slice", outcome="ok") == 1
    assert metric(text, "kbc_mcp_tool_calls_total", tool="get_file", outcome="error") == 1
    assert metric(text, "kbc_mcp_tool_seconds_count", tool="retrieve_slice") == 1
    assert metric(text, "kbc_retrievals_total", use_case="implementation", retrieval="lexical") == 2
    # MCP packs its slice within its budget less the line naming the query_id
    assert metric(text, "kbc_slice_budget_tokens_total", use_case="implementation") == 1800 - QUERY_ID_TOKENS
    assert metric(text, "kbc_slice_tokens_total", use_case="implementation") == slice_["tokens"] + tool_tokens
    assert metric(text, "kbc_slice_budget_used_ratio_count", use_case="implementation") == 2
    assert metric(text, "kbc_gaps_logged_total", kind="usage") == 1
    for part in ("files", "chunks", "units", "embedded"):
        assert metric(text, "kbc_index_size", part=part) == status.index[part], part
    assert metric(text, "kbc_retrieval_mode", retrieval="lexical") == 1
    assert metric(text, "kbc_last_refresh_success", mode="up-to-date") == 1
    assert 0 <= metric(text, "kbc_seconds_since_last_refresh") < 3600
    assert metric(text, "kbc_last_build_timestamp_seconds") > 1.7e9


def test_a_failed_refresh_is_reported_as_failed(repo: Path, tmp_path: Path) -> None:
    """Another writer holds the store past the lock timeout: the refresh fails, and says so."""
    from kbc.domain.errors import LockTimeout
    from kbc.domain.settings import Settings
    from kbc.serve.metrics import Metrics
    from kbc.store.lock import writer_lock

    store = tmp_path / "store"
    kb = KnowledgeBase(repo, store=store, settings=Settings(lock_timeout=0), components=Components.lexical())
    with writer_lock(store, 0), pytest.raises(LockTimeout):
        kb.refresh(no_llm=True)
    text = Metrics(kb).exposition().decode()
    assert metric(text, "kbc_last_refresh_success", mode="failed") == 0
    assert "kbc_last_refresh_success{" in text and "kbc_index_size{" not in text


def _raw(url: str, head: bytes, parts: Iterator[bytes]) -> bytes:
    """What the server answers to ``head`` and the ``parts`` sent after it, read as soon as it
    answers (a server that waits for the rest of the body times the socket out)."""
    import socket
    import urllib.parse

    address = urllib.parse.urlsplit(url)
    with socket.create_connection((address.hostname, address.port), timeout=10) as sock:
        sock.sendall(head)
        sock.setblocking(False)
        answer = b""
        for part in parts:
            try:
                sock.sendall(part)
            except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                break
            try:
                answer += sock.recv(65536)
            except BlockingIOError:
                continue
            if answer:
                break
        sock.settimeout(10)
        while b"\r\n\r\n" not in answer:
            more = sock.recv(65536)
            if not more:
                break
            answer += more
    return answer


def test_a_body_too_large_is_refused_before_it_is_read(url: str) -> None:
    host = url.split("//", 1)[1]
    declared = (
        f"POST /api/v1/retrieve HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: 800000000\r\n\r\n"
    ).encode()
    answer = _raw(url, declared, iter([b'{"task": "']))  # 800 MB announced, a few bytes sent
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    chunked = (
        f"POST /api/v1/retrieve HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Transfer-Encoding: chunked\r\n\r\n"
    ).encode()
    piece = b"a" * 65536
    parts = (f"{len(piece):x}\r\n".encode() + piece + b"\r\n" for _ in range(200))  # 13 MB, never ended
    answer = _raw(url, chunked, parts)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert httpx.post(f"{url}/api/v1/retrieve", json={"task": TASK, "budget": 500}).status_code == 200


def test_another_sites_page_cannot_run_a_query(url: str) -> None:
    def logged() -> int:
        return len(httpx.get(f"{url}/api/v1/gaps").json())

    before = logged()
    for path in (
        "/ask?q=refund+window",
        "/slice?task=refund+window",
        "/search?q=refund",
        "/api/v1/search?q=refund",
    ):
        for site in ("cross-site", "same-site"):  # an <img> on any page, or another port of this host
            answer = httpx.get(f"{url}{path}", headers={"Sec-Fetch-Site": site})
            assert answer.status_code == 403, (path, site, answer.text[:200])
            assert "another site's page may not run a query here" in answer.text
    assert logged() == before
    assert httpx.get(f"{url}/search?q=refund", headers={"Sec-Fetch-Site": "same-origin"}).status_code == 200
    assert httpx.get(f"{url}/api/v1/search?q=refund").status_code == 200  # not a browser
    link = httpx.get(f"{url}/ask", headers={"Sec-Fetch-Site": "cross-site"})  # a link to the page itself
    assert link.status_code == 200
