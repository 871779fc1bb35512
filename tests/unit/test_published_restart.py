"""A server of a published store whose object store cannot be reached: started with a copy an
earlier run pulled, it serves that copy and says why it cannot look for a newer one; started
with none, it answers that nothing is pulled yet, saying why."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import repo_factory
from web import free_port

from kbc import __version__
from kbc.domain.errors import StoreError
from kbc.domain.settings import Settings
from kbc.domain.workspace import RepositoryEntry
from kbc.services.components import Components
from kbc.services.knowledge import KnowledgeBase
from kbc.services.publication import RECORD, Entry, Manifest, sha256_of, store_files
from kbc.services.published import Followed
from kbc.services.workspace import Workspace
from kbc.store.state import read_state

LOCATION = "s3://kbc-stores/stores/shop"


@pytest.fixture
def unreachable(monkeypatch: pytest.MonkeyPatch) -> None:
    """The AWS variables of a user whose endpoint answers nothing (a port nobody listens on)."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-a-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")


def pulled_before(tmp_path: Path, data: Path) -> str:
    """A copy of a publication as an earlier run pulled it into ``data``; its commit."""
    root = repo_factory(tmp_path)(
        {"shop/__init__.py": "", "shop/refunds.py": '"""Refunds."""\n\ndef refund_order():\n    return 1\n'}
    )
    with KnowledgeBase(root, components=Components.lexical()) as kb:
        kb.build(no_llm=True)
    store = root / ".kbc"
    state = read_state(store)
    assert state is not None
    files = store_files(store)
    entries = tuple(Entry(f, sha256_of(store / f), (store / f).stat().st_size) for f in files)
    manifest = Manifest("shop", state.commit, __version__, {}, entries)
    copy = Followed(RepositoryEntry("shop", published=LOCATION), str(data)).cache / manifest.id
    for f in files:
        (copy / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(store / f, copy / f)
    (copy / RECORD).write_text(manifest.to_json())
    return state.commit


def test_the_copy_an_earlier_run_pulled_is_served_while_the_store_is_unreachable(
    tmp_path: Path, unreachable: None
) -> None:
    data = tmp_path / "data"
    commit = pulled_before(tmp_path, data)
    workspace = Workspace(
        [RepositoryEntry("shop", published=LOCATION)],
        Settings(data_dir=str(data)),
        components=Components.lexical(),
    )
    try:
        workspace.refresh_now("shop")  # what the poll does
        listed = workspace.listing()[0]
        assert (listed["status"], listed["commit"], listed["url"]) == ("ready", commit, LOCATION)
        assert "unreachable" in listed["problem"] and "serving publication" in listed["problem"]
        with workspace.using("shop") as kb:
            assert any(h.path == "shop/refunds.py" for h in kb.search("refund_order", 3, "implementation"))
    finally:
        workspace.close()


def test_nothing_is_served_before_a_first_pull_and_the_answer_says_why(
    tmp_path: Path, unreachable: None
) -> None:
    workspace = Workspace(
        [RepositoryEntry("shop", published=LOCATION)],
        Settings(data_dir=str(tmp_path)),
        components=Components.lexical(),
    )
    try:
        workspace.refresh_now("shop")
        listed = workspace.listing()[0]
        assert listed["status"] == "failed" and "unreachable" in listed["problem"]
        with (
            pytest.raises(StoreError, match="no publication pulled yet.*unreachable"),
            workspace.using("shop"),
        ):
            pass
    finally:
        workspace.close()
