"""Many repositories served by one process: `kbc serve --repo A --repo B`, REST and MCP naming
repositories, retrieval in one or fused across all under one budget, stores opened lazily and
closed when idle, and a push webhook bringing a URL repository's new commit in without a
restart (a local bare remote)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from helpers import git, repo_factory, sign, until
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent
from web import built_repository, free_port, running

from kbc.domain.settings import Settings
from kbc.domain.workspace import RepositoryEntry
from kbc.services.components import Components
from kbc.services.fused import retrieve_across
from kbc.services.knowledge import KnowledgeBase
from kbc.services.workspace import Workspace

CLICK = {
    "click/__init__.py": '"""Compose command line interfaces from decorated functions."""\n',
    "click/core.py": '''
        """Commands, groups and the context they run in."""


        class Command:
            """A command line command: parses its options and arguments, then calls its callback."""

            def __init__(self, name: str, callback: object) -> None:
                self.name = name
                self.callback = callback

            def parse_args(self, args: list[str]) -> dict[str, str]:
                """Parse the command line options and arguments into parameters."""
                return dict(arg.split("=", 1) for arg in args if "=" in arg)


        def command(name: str) -> object:
            """Decorate a function to make it a command line command."""
            return lambda callback: Command(name, callback)
    ''',
    "click/termui.py": '''
        """Prompts and progress bars on the terminal."""


        def prompt(text: str, default: str = "") -> str:
            """Ask the user for a value on the terminal, with a default."""
            return input(text) or default
    ''',
}
REQUESTS = {
    "requests/__init__.py": '"""HTTP for humans: sessions, adapters and retries."""\n',
    "requests/sessions.py": '''
        """Sessions keep cookies and connection pools across requests."""
        from requests.adapters import HTTPAdapter


        class Session:
            """An HTTP session: sends requests through mounted transport adapters."""

            def __init__(self) -> None:
                self.adapter = HTTPAdapter(max_retries=3)

            def request(self, method: str, url: str) -> str:
                """Send an HTTP request and return the response body."""
                return self.adapter.send(method, url)
    ''',
    "requests/adapters.py": '''
        """Transport adapters: connection pooling and retries of failed HTTP requests."""


        class HTTPAdapter:
            """Send HTTP requests over pooled connections, retrying failed ones."""

            def __init__(self, max_retries: int = 0) -> None:
                self.max_retries = max_retries

            def send(self, method: str, url: str) -> str:
                """Send the request, retrying up to max_retries times on connection errors."""
                return f"{method} {url}"
    ''',
}
TASK = "send an HTTP request with retries from a command line command that parses options"


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    with (
        built_repository(tmp_path_factory.mktemp("click"), CLICK) as click,
        built_repository(tmp_path_factory.mktemp("requests"), REQUESTS) as requests,
    ):
        yield {"click": click, "requests": requests}


def lexical_workspace(repos: dict[str, Path], **limits: Any) -> Workspace:
    entries = [RepositoryEntry(name, str(path)) for name, path in repos.items()]
    return Workspace(entries, Settings(embed_model="none", **limits), components=Components.lexical())


# -- kbc serve --repo A --repo B ------------------------------------------------------


@pytest.mark.slow
def test_kbc_serve_names_repositories_everywhere(repos: dict[str, Path], tmp_path: Path) -> None:
    port = free_port()
    log_path = tmp_path / "serve.log"
    command = [
        sys.executable,
        "-m",
        "kbc",
        "-c",
        "index.embed_model=none",
        "serve",
        "--transport",
        "http",
        "--port",
        str(port),
        "--repo",
        f"requests={repos['requests']}",
        "--repo",
        f"click={repos['click']}",
    ]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "KBC_CONFIG": ""}
    with log_path.open("w") as log:
        server = subprocess.Popen(command, stdout=log, stderr=log, stdin=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait(url, server, log_path)
        listed = httpx.get(f"{url}/api/v1/repositories").json()
        assert [r["name"] for r in listed] == ["requests", "click"]
        assert all(r["status"] == "ready" and len(r["commit"]) == 40 and r["built_at"] for r in listed)

        one = httpx.post(
            f"{url}/api/v1/retrieve", json={"task": TASK, "repository": "click", "budget": 800}
        ).json()
        assert one["repository"] == "click" and one["items"]
        assert {i["repository"] for i in one["items"]} == {"click"}
        assert all(i["path"].startswith("click/") for i in one["items"] if i["kind"] != "view")

        both = httpx.post(f"{url}/api/v1/retrieve", json={"task": TASK, "budget": 1500}).json()
        assert {i["repository"] for i in both["items"]} == {"click", "requests"}
        assert both["tokens"] <= 1500 and "## repository: click" in both["text"]
        assert {r["name"] for r in both["repositories"]} == {"click", "requests"}
        again = httpx.post(f"{url}/api/v1/retrieve", json={"task": TASK, "budget": 1500}).json()
        assert {k: v for k, v in again.items() if k != "query_id"} == {
            k: v for k, v in both.items() if k != "query_id"
        }
        used = httpx.post(
            f"{url}/api/v1/usage",
            json={"query_id": both["query_id"], "helpful_ids": [both["items"][0]["id"]]},
        )
        assert used.json() == {"recorded": True}

        hits = httpx.get(f"{url}/api/v1/search", params={"q": "retries", "k": 4}).json()
        assert hits and all(h["repository"] in ("click", "requests") for h in hits)
        assert hits[0]["repository"] == "requests"
        symbols = httpx.get(f"{url}/api/v1/symbols", params={"name": "Command.parse_args"}).json()
        assert [(s["repository"], s["location"].split(":")[0]) for s in symbols] == [
            ("click", "click/core.py")
        ]

        unnamed = httpx.get(f"{url}/api/v1/views")
        assert unnamed.status_code == 400 and "click" in unnamed.json()["hint"]
        views = httpx.get(f"{url}/api/v1/views", params={"repository": "requests"}).json()
        assert any(v["id"] == "module:requests" or v["id"].startswith("module:requests") for v in views)
        unknown = httpx.get(f"{url}/api/v1/status", params={"repository": "flask"})
        assert unknown.status_code == 404 and "requests, click" in unknown.json()["hint"]

        tools = anyio.run(_mcp_calls, f"{url}/mcp")
        assert [r["name"] for r in tools["list_repositories"]] == ["requests", "click"]
        assert {i["repository"] for i in tools["retrieve_slice"]["items"]} == {"requests"}
        assert "name one" in tools["get_view"]

        page = httpx.get(f"{url}/")
        assert 'name="repository"' in page.text and '<option value="requests" selected>' in page.text
        switched = httpx.post(f"{url}/repository", data={"repository": "click"})
        assert switched.status_code == 303 and "kbc_repository=click" in switched.headers["set-cookie"]
        page = httpx.get(
            f"{url}/symbol", params={"name": "Command.parse_args"}, cookies={"kbc_repository": "click"}
        )
        assert '<option value="click" selected>' in page.text and "click/core.py" in page.text
    finally:
        server.terminate()
        server.wait(timeout=30)


async def _mcp_calls(url: str) -> dict[str, Any]:
    async with (
        httpx2.AsyncClient(timeout=30) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        listed = await session.call_tool("list_repositories", {})
        sliced = await session.call_tool(
            "retrieve_slice", {"task": TASK, "repository": "requests", "budget": 600}
        )
        refused = await session.call_tool("get_view", {"id": "architecture"})
        assert refused.is_error and isinstance(refused.content[0], TextContent)
        assert listed.structured_content is not None and sliced.structured_content is not None
        return {
            "list_repositories": listed.structured_content["result"],
            "retrieve_slice": sliced.structured_content,
            "get_view": refused.content[0].text,
        }


def _wait(url: str, server: subprocess.Popen[bytes], log_path: Path) -> None:
    deadline = time.monotonic() + 90
    while True:
        try:
            if httpx.get(f"{url}/api/v1/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(log_path.read_text())
        time.sleep(0.2)


# -- fused retrieval and bounded stores ----------------------------------------------


@pytest.mark.parametrize("budget", [300, 700, 2000])
def test_a_slice_across_repositories_keeps_its_budget_and_its_bytes(
    repos: dict[str, Path], budget: int
) -> None:
    workspace = lexical_workspace(repos)
    try:
        first = retrieve_across(workspace, TASK, budget=budget)
        second = retrieve_across(workspace, TASK, budget=budget)
    finally:
        workspace.close()
    assert first["tokens"] <= budget and first["text"] == second["text"]
    assert first["items"] == second["items"] and first["fingerprint"] == second["fingerprint"]
    counter = Components.lexical().token_counter()
    assert counter.count(first["text"]) == first["tokens"]
    assert all(i["repository"] in repos for i in first["items"])


def test_a_task_about_one_repository_is_answered_from_it_first(repos: dict[str, Path]) -> None:
    workspace = lexical_workspace(repos)
    try:
        found = retrieve_across(workspace, "Session request HTTPAdapter send max_retries", budget=600)
    finally:
        workspace.close()
    assert found["items"][0]["repository"] == "requests"
    assert (
        found["text"].index("## repository: requests") < found["text"].find("## repository: click")
        or "## repository: click" not in found["text"]
    )


def test_a_repository_without_a_build_is_built_on_first_use(make_repo: Any) -> None:
    from kbc.domain.errors import StoreError

    root = make_repo(CLICK)
    workspace = Workspace(
        [RepositoryEntry("click", str(root))], Settings(embed_model="none"), components=Components.lexical()
    )
    try:
        assert workspace.listing()[0]["status"] == "not built"
        with pytest.raises(StoreError, match="is being built") as refused, workspace.using("click"):
            pass
        assert "list_repositories" in refused.value.hint
        assert workspace.listing()[0]["status"] == "building"  # its build is queued
        assert workspace.wait_for("click", 60)  # no follower thread here: it runs now
        assert workspace.listing()[0]["status"] == "ready"
        with workspace.using("click") as kb:
            assert kb.reads.symbol("Command.parse_args")
    finally:
        workspace.close()


def test_stores_open_on_use_and_close_beyond_the_limit_or_when_idle(repos: dict[str, Path]) -> None:
    workspace = lexical_workspace(repos, max_open=1, idle_seconds=60)
    try:
        assert workspace.open_count() == 0
        with workspace.using("click") as kb:
            assert kb.reads.symbol("Command")
        with workspace.using("requests") as kb:
            assert kb.reads.symbol("Session")
        assert workspace.open_count() == 1  # click was closed when requests opened
        assert [r["open"] for r in workspace.listing()] == [False, True]
        assert workspace.close_idle(now=time.monotonic() + 61) == ["requests"]
        assert workspace.open_count() == 0
        with workspace.using("click") as kb:  # opened again on its next request
            assert kb.reads.symbol("Command")
    finally:
        workspace.close()


# -- URL repositories and push webhooks ---------------------------------------------------


@pytest.mark.slow
def test_a_push_webhook_brings_the_new_commit_in_without_a_restart(tmp_path: Path) -> None:
    work = repo_factory(tmp_path)(CLICK)
    remote = tmp_path / "click.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(remote))
    git(work, "remote", "add", "origin", str(remote))
    secret = "a-webhook-secret-for-the-tests"
    settings = Settings(
        embed_model="none", data_dir=str(tmp_path / "data"), webhook_secret=secret, fetch_seconds=0
    )
    workspace = Workspace(
        [RepositoryEntry("click", url=f"file://{remote}")], settings, components=Components.lexical()
    )
    with running(workspace) as url:
        # the server's first use of its one repository (opening it) queued its first build
        ready = until(
            lambda: [r for r in httpx.get(f"{url}/api/v1/repositories").json() if r["status"] == "ready"]
        )
        assert ready[0]["commit"] == git(work, "rev-parse", "HEAD").strip()

        (work / "click" / "shell.py").write_text(
            '"""Shell completion."""\n\n\ndef complete_shell_words(words):\n'
            '    """Complete the words typed in a shell."""\n    return words\n'
        )
        git(work, "add", "-A")
        git(work, "commit", "-q", "-m", "shell completion")
        git(work, "push", "-q", "origin", "HEAD")
        pushed = git(work, "rev-parse", "HEAD").strip()
        branch = git(work, "symbolic-ref", "--short", "HEAD").strip()
        body = json.dumps(
            {
                "ref": f"refs/heads/{branch}",
                "after": pushed,
                "repository": {"clone_url": f"file://{remote}/", "full_name": "pallets/click"},
            }
        ).encode()

        forged = httpx.post(
            f"{url}/api/v1/hooks/push",
            content=body,
            headers={"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(body, "wrong")},
        )
        assert forged.status_code == 401
        hooked = httpx.post(
            f"{url}/api/v1/hooks/push",
            content=body,
            headers={
                "X-GitHub-Event": "push",
                "X-Hub-Signature-256": sign(body, secret),
                "Content-Type": "application/json",
            },
        )
        assert hooked.status_code == 202 and hooked.json()["queued"] == ["click"]
        served = until(
            lambda: [
                r
                for r in httpx.get(f"{url}/api/v1/repositories").json()
                if r["commit"] == pushed and r["status"] == "ready"
            ]
        )
        assert served[0]["behind"] is False
        found = httpx.post(
            f"{url}/api/v1/retrieve", json={"task": "complete_shell_words", "budget": 600}
        ).json()
        assert found["items"][0]["path"] == "click/shell.py"

        gitlab = json.dumps(
            {"ref": "refs/heads/other", "after": "0" * 40, "project": {"git_http_url": f"file://{remote}"}}
        ).encode()
        elsewhere = httpx.post(
            f"{url}/api/v1/hooks/push",
            content=gitlab,
            headers={"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": secret},
        )
        assert elsewhere.status_code == 200 and elsewhere.json()["queued"] == []


def test_a_webhook_body_that_does_not_parse_is_answered_400(make_repo: Any) -> None:
    secret = "a-webhook-secret-for-the-tests"
    settings = Settings(embed_model="none", webhook_secret=secret)
    kb = KnowledgeBase(make_repo(CLICK), settings=settings, components=Components.lexical())
    kb.build(no_llm=True)
    deep = b'{"ref": "refs/heads/main", "repository": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with running(kb) as url:
        for body, words in (
            (deep, "nested too deeply"),
            (b"payload=%7B%7D", "not JSON"),
            (b'{"ref": "\xff', "not JSON"),
            (b"\xff\xfe\x00{", "not JSON"),
        ):
            reply = httpx.post(
                f"{url}/api/v1/hooks/push",
                content=body,
                headers={"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(body, secret)},
            )
            assert reply.status_code == 400, reply.text
            assert words in reply.json()["error"] and reply.json()["hint"], reply.text


@pytest.mark.slow
def test_an_answer_says_when_head_moved_and_the_refresh_tool_brings_it_in(make_repo: Any) -> None:
    root = make_repo(CLICK)
    kb = KnowledgeBase(root, settings=Settings(embed_model="none"), components=Components.lexical())
    kb.build(no_llm=True)
    (root / "click" / "shell.py").write_text(
        '"""Shell completion."""\n\n\ndef complete_shell_words(words):\n'
        '    """Complete the words typed in a shell."""\n    return words\n'
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "shell completion")
    with running(kb) as url:
        ask = {"task": "complete_shell_words", "budget": 600}
        stale = httpx.post(f"{url}/api/v1/retrieve", json=ask).json()
        assert "its store is behind its repository" in stale["note"]

        async def refreshed() -> dict[str, Any]:
            async with (
                httpx2.AsyncClient(timeout=120) as client,
                streamable_http_client(f"{url}/mcp", http_client=client) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                done = await session.call_tool("refresh", {"wait": True})
                assert not done.is_error and done.structured_content is not None
                return done.structured_content

        state = anyio.run(refreshed)
        assert state["status"] == "ready" and state["behind"] is False
        assert state["commit"] == git(root, "rev-parse", "HEAD").strip()
        fresh = httpx.post(f"{url}/api/v1/retrieve", json=ask).json()
    assert "behind" not in fresh["note"] and fresh["items"][0]["path"] == "click/shell.py"
