"""A remote that accepts the connection and never answers: its clone stops at its time limit, it
holds up no other repository, and a clone that failed says why and is retried later, not on
every request."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from helpers import git, repo_factory, sign, until
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from silent_server import silent_server
from test_workspace import CLICK, REQUESTS
from web import built_repository, running

from kbc.analyzers.gitrepo import Limits, as_fetched, follow
from kbc.domain.errors import TargetError
from kbc.domain.knowledge_roots import KnowledgeRoot
from kbc.domain.settings import Settings
from kbc.domain.workspace import RepositoryEntry
from kbc.services.components import Components
from kbc.services.workspace import Workspace

SECRET = "a-webhook-secret-for-the-tests"
PASSWORD = "s3cret-in-the-url"
LONG = 120  # a time limit the tests never reach: what ends before it was not stopped by it


def _stays(check: Callable[[], bool], seconds: float = 2.0) -> bool:
    """Whether ``check`` holds all along ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not check():
            return False
        time.sleep(0.1)
    return check()


def _follow_in_thread(
    url: str, data: Path, limits: Limits, fetched: dict[str, TargetError | None] | None = None
) -> BaseException | None:
    """What follow() raised (within as_fetched(fetched) if given), run on a thread the test does
    not wait on for more than a minute."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            if fetched is None:
                follow(url, "", str(data), limits=limits)
            else:
                with as_fetched(fetched):
                    follow(url, "", str(data), limits=limits)
        except BaseException as error:  # handed back to the test
            raised.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive(), "the clone was not stopped"
    return raised[0] if raised else None


def test_a_clone_from_a_remote_that_never_answers_stops_at_its_time_limit(tmp_path: Path) -> None:
    with silent_server() as remote:
        error = _follow_in_thread(remote.url(f"kbc:{PASSWORD}"), tmp_path, Limits(2, LONG))
        assert isinstance(error, TargetError)
        assert "did not finish within 2 s" in error.message and "discover.git_timeout" in error.message
        assert PASSWORD not in error.message and PASSWORD not in error.hint
        assert remote.accepted >= 1
        # every process of the clone is stopped: none holds its connection open any more
        until(lambda: remote.still_open() == 0, 30)


def test_a_remote_that_sends_nothing_is_dropped_at_the_stall_limit(tmp_path: Path) -> None:
    with silent_server() as remote:
        error = _follow_in_thread(remote.url(), tmp_path, Limits(LONG, 2))
        assert isinstance(error, TargetError)
        assert "too slow" in error.message  # git's own low-speed limit, long before the time limit


def test_what_was_fetched_is_not_fetched_again_within_as_fetched(tmp_path: Path) -> None:
    with silent_server() as remote:
        said = TargetError("cannot follow it: git clone did not finish within 2 s", hint="check it")
        error = _follow_in_thread(remote.url(), tmp_path, Limits(LONG, LONG), {remote.url(): said})
        assert isinstance(error, TargetError) and error.message == said.message
        assert remote.accepted == 0
    _, bare = _bare_remote(tmp_path)
    url = f"file://{bare}"
    cloned, _ = follow(url, "", str(tmp_path / "data"), limits=Limits(LONG, LONG))
    bare.rename(tmp_path / "gone.git")
    with as_fetched({url: None}):  # reset to what was fetched, without going to the remote
        assert follow(url, "", str(tmp_path / "data"), limits=Limits(LONG, LONG))[0] == cloned
    with pytest.raises(TargetError, match="cannot follow"):
        follow(url, "", str(tmp_path / "data"), limits=Limits(LONG, LONG))


@pytest.mark.slow
def test_a_knowledge_root_that_hangs_holds_up_no_other_repository(tmp_path: Path) -> None:
    with (
        silent_server() as remote,
        built_repository(_folder(tmp_path, "click"), CLICK) as click,
        built_repository(_folder(tmp_path, "requests"), REQUESTS) as requests,
    ):
        settings = Settings(
            embed_model="none",
            data_dir=str(tmp_path / "data"),
            fetch_seconds=0,
            git_timeout=LONG,
            git_stall_timeout=LONG,
        )
        followed = replace(settings, knowledge=(KnowledgeRoot("team", url=remote.url()),))
        workspace = Workspace(
            [RepositoryEntry("requests", str(requests)), RepositoryEntry("click", str(click))],
            settings,
            settings_for=lambda root: followed if root == requests.resolve() else settings,
            components=Components.lexical(),
        )
        workspace.start()
        try:
            workspace.enqueue("requests")
            until(lambda: remote.accepted >= 1, 60)
            (click / "click" / "shell.py").write_text('"""Shell completion."""\n')
            git(click, "add", "-A")
            git(click, "commit", "-q", "-m", "shell completion")
            workspace.enqueue("click")
            assert workspace.wait_for("click", 60)
            listed = {r["name"]: r for r in workspace.listing()}
            assert listed["click"]["commit"] == git(click, "rev-parse", "HEAD").strip()
            assert listed["requests"]["status"] == "refreshing" and remote.still_open() >= 1
        finally:
            workspace.close()
        until(lambda: remote.still_open() == 0, 30)  # closing stopped the fetch under way


def _folder(tmp_path: Path, name: str) -> Path:
    (tmp_path / name).mkdir()
    return tmp_path / name


def _bare_remote(tmp_path: Path) -> tuple[Path, Path]:
    work = repo_factory(tmp_path)(CLICK)
    remote = tmp_path / "click.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(remote))
    git(work, "remote", "add", "origin", str(remote))
    return work, remote


def _status(url: str, name: str) -> dict[str, Any]:
    listed = httpx.get(f"{url}/api/v1/repositories", timeout=30).json()
    return next(r for r in listed if r["name"] == name)


@pytest.mark.slow
def test_a_hanging_url_repository_holds_up_no_other_repository(tmp_path: Path) -> None:
    work, bare = _bare_remote(tmp_path)
    settings = Settings(
        embed_model="none",
        data_dir=str(tmp_path / "data"),
        webhook_secret=SECRET,
        fetch_seconds=0,
        git_timeout=LONG,
        git_stall_timeout=LONG,
    )
    with silent_server() as remote:
        workspace = Workspace(
            [RepositoryEntry("hang", url=remote.url()), RepositoryEntry("click", url=f"file://{bare}")],
            settings,
            components=Components.lexical(),
        )
        with running(workspace) as url:
            # the first request across both queues both builds, the hanging one first
            first = httpx.post(f"{url}/api/v1/retrieve", json={"task": "parse options"}, timeout=30)
            assert "no repository of this server has a build yet" in first.text
            until(lambda: remote.accepted >= 1, 60)
            ready = until(lambda: _status(url, "click")["status"] == "ready", 60)
            assert ready
            assert _status(url, "hang")["status"] == "building" and remote.still_open() >= 1

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
                    "repository": {"clone_url": f"file://{bare}/"},
                }
            ).encode()
            hooked = httpx.post(
                f"{url}/api/v1/hooks/push",
                content=body,
                headers={"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(body, SECRET)},
                timeout=30,
            )
            assert hooked.status_code == 202 and hooked.json()["queued"] == ["click"]
            until(lambda: _status(url, "click")["commit"] == pushed, 60)
            # brought in while the hanging clone is still under way, long before its time limit
            assert _status(url, "hang")["status"] == "building" and remote.still_open() >= 1
            found = httpx.post(
                f"{url}/api/v1/retrieve", json={"task": "complete_shell_words", "budget": 600}, timeout=30
            ).json()
            assert found["items"][0]["path"] == "click/shell.py"
            assert "hang" in found["note"]  # left out, and said so


@pytest.mark.slow
def test_a_failed_clone_says_why_and_is_retried_later_not_on_every_request(tmp_path: Path) -> None:
    settings = Settings(
        embed_model="none",
        data_dir=str(tmp_path / "data"),
        fetch_seconds=0,
        git_timeout=2,
        git_stall_timeout=2,
    )
    with silent_server() as remote, built_repository(_folder(tmp_path, "requests"), REQUESTS) as local:
        workspace = Workspace(
            [
                RepositoryEntry("hang", url=remote.url(f"kbc:{PASSWORD}")),
                RepositoryEntry("requests", str(local)),
            ],
            settings,
            components=Components.lexical(),
        )
        with running(workspace) as url:
            ask = {"task": "send an HTTP request with retries", "budget": 800}
            first = httpx.post(f"{url}/api/v1/retrieve", json=ask, timeout=30)
            assert first.status_code == 200 and first.json()["items"][0]["repository"] == "requests"
            failed = until(lambda: _status(url, "hang")["status"] == "failed", 60)
            assert failed
            described = _status(url, "hang")
            assert described["problem"] and PASSWORD not in json.dumps(described)
            assert described["retry_at"]  # when it is tried again
            tried = remote.accepted
            assert tried >= 1

            for _ in range(5):  # requests across every repository: answered, and no clone again
                again = httpx.post(f"{url}/api/v1/retrieve", json=ask, timeout=30)
                assert again.status_code == 200
                assert _status(url, "hang")["status"] == "failed"
            named = httpx.post(f"{url}/api/v1/retrieve", json={**ask, "repository": "hang"}, timeout=30)
            assert named.status_code == 503
            said = json.dumps(named.json())
            assert "failed" in said and "retried" in said and "is being built" not in said
            assert PASSWORD not in said
            assert _stays(lambda: remote.accepted == tried)

            async def refresh_now() -> dict[str, Any]:
                async with (
                    httpx2.AsyncClient(timeout=60) as client,
                    streamable_http_client(f"{url}/mcp", http_client=client) as (read, write),
                    ClientSession(read, write) as session,
                ):
                    await session.initialize()
                    done = await session.call_tool("refresh", {"repository": "hang"})
                    assert not done.is_error, done.content
                    assert done.structured_content is not None
                    return done.structured_content

            asked = anyio.run(refresh_now)  # asked for by name: tried again at once
            assert asked["status"] in ("building", "failed")
            until(lambda: remote.accepted > tried, 60)


@pytest.mark.slow
def test_refresh_with_wait_answers_within_its_bound_while_the_clone_hangs(tmp_path: Path) -> None:
    settings = Settings(
        embed_model="none",
        data_dir=str(tmp_path / "data"),
        fetch_seconds=0,
        git_timeout=LONG,
        git_stall_timeout=LONG,
        refresh_wait=1,
    )
    with silent_server() as remote, built_repository(_folder(tmp_path, "requests"), REQUESTS) as local:
        workspace = Workspace(
            [RepositoryEntry("hang", url=remote.url()), RepositoryEntry("requests", str(local))],
            settings,
            components=Components.lexical(),
        )
        with running(workspace) as url:

            async def refresh_and_wait() -> dict[str, Any]:
                with anyio.fail_after(60):
                    async with (
                        httpx2.AsyncClient(timeout=60) as client,
                        streamable_http_client(f"{url}/mcp", http_client=client) as (read, write),
                        ClientSession(read, write) as session,
                    ):
                        await session.initialize()
                        done = await session.call_tool("refresh", {"wait": True, "repository": "hang"})
                        assert not done.is_error, done.content
                        assert done.structured_content is not None
                        return done.structured_content

            answered = anyio.run(refresh_and_wait)
            assert answered["status"] == "building"
            assert "continues in the background" in answered["note"]
            assert remote.still_open() >= 1  # the clone goes on, long before its time limit
