"""What a hostile probe of the server found: a repository URL's password served back, an
unknown repository's name echoed whole."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from web import STORE, built_repository, running

from kbc.domain.settings import Settings
from kbc.domain.workspace import RepositoryEntry
from kbc.services.components import Components
from kbc.services.workspace import Workspace

PASSWORD = "hunter2-not-for-your-eyes"
TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJ012345"


@pytest.mark.slow
def test_no_interface_serves_a_repository_url_s_password(tmp_path: Path) -> None:
    (tmp_path / "shop").mkdir()
    with built_repository(tmp_path / "shop", STORE) as root:
        entries = [
            RepositoryEntry("shop", str(root)),
            RepositoryEntry("remote", url=f"https://me:{PASSWORD}@127.0.0.1:9/team/remote.git"),
            RepositoryEntry("token", url=f"https://{TOKEN}@127.0.0.1:9/team/token.git"),
        ]
        settings = Settings(embed_model="none", data_dir=str(tmp_path / "data"), fetch_seconds=0)
        workspace = Workspace(entries, settings, components=Components.lexical())
        with running(workspace) as url:
            listed = httpx.get(f"{url}/api/v1/repositories")
            assert listed.status_code == 200 and PASSWORD not in listed.text and TOKEN not in listed.text
            urls = {r["name"]: r["url"] for r in listed.json()}
            assert urls["remote"] == "https://me:***@127.0.0.1:9/team/remote.git"
            assert urls["token"] == "https://***@127.0.0.1:9/team/token.git"  # a token for a user

            async def tool() -> str:
                async with (
                    streamable_http_client(f"{url}/mcp") as (read, write),
                    ClientSession(read, write) as session,
                ):
                    await session.initialize()
                    found = await session.call_tool("list_repositories", {})
                    return found.model_dump_json()

            served = anyio.run(tool)
            assert PASSWORD not in served and TOKEN not in served


@pytest.mark.slow
def test_an_unknown_repository_name_is_not_echoed_whole(tmp_path: Path) -> None:
    (tmp_path / "shop").mkdir()
    with built_repository(tmp_path / "shop", STORE) as root:
        workspace = Workspace(
            [RepositoryEntry("shop", str(root)), RepositoryEntry("depot", str(root))],
            Settings(embed_model="none", fetch_seconds=0),
            components=Components.lexical(),
        )
        with running(workspace) as url:
            name = "x" * 300_000
            answer = httpx.post(f"{url}/api/v1/retrieve", json={"task": "refunds", "repository": name})
    assert answer.status_code == 404
    assert len(answer.content) < 2_000 and "no repository named 'xxxx" in answer.text
