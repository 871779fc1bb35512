"""A build that leaves its embedding to a background process: queryable at once, lexical and
saying so; a killed embedding resumed from its batches; hybrid, byte for byte, once filled."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import time
from pathlib import Path

import pytest
from helpers import git, write_tree
from test_build_retrieve import SHOP, invoke, retrieve_json

from kbc.domain.settings import load_settings
from kbc.index.embed import DEFAULT_MODEL, load_embedder
from kbc.index.fill import PARTIAL, embed_pending, pending_of
from kbc.services.embedding import resume_filling
from kbc.store.layout import chroma_dir, index_dir
from kbc.store.lock import fill_lock

TASK = "refund window"
# A repository may hold a package named like kbc's, even in its store folder (the background
# process's working folder): that process must not run it.
HOSTILE = {
    ".kbc/kbc/__init__.py": "",
    ".kbc/kbc/__main__.py": "open('RAN-THE-REPOSITORY-KBC', 'w').write('x')\n",
}


def _repo(root: Path) -> Path:
    root.mkdir(parents=True)
    write_tree(root, {**SHOP, **HOSTILE})
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "shop")
    return root


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().split(") ")[1].startswith("Z")  # a zombie holds no lock
    except FileNotFoundError:
        return True


def _status(root: Path) -> dict:  # type: ignore[type-arg]
    return json.loads(invoke("status", "--repo", str(root), "--format", "json"))  # type: ignore[no-any-return]


@pytest.mark.slow
def test_a_build_leaves_its_vectors_to_a_background_process_killed_resumed_and_filled(tmp_path: Path) -> None:
    waited = _repo(tmp_path / "waited")
    assert json.loads(invoke("build", str(waited), "--format", "json", "--wait"))["index"]["pending"] == 0
    expected = retrieve_json(waited, TASK)
    assert expected["retrieval"] == "hybrid"

    root = _repo(tmp_path / "repo")
    store = root / ".kbc"
    store.mkdir(exist_ok=True)
    with fill_lock(store):  # as if another process were embedding: the one started waits for it
        summary = json.loads(invoke("build", str(root), "--format", "json", "--no-wait"))
        pending, pid = summary["index"]["pending"], summary["filling"]
        assert summary["index"]["retrieval"] == "lexical" and pending > 0 and pid > 0
        assert not chroma_dir(index_dir(store)).exists()  # the build left the vector store unopened

        early = retrieve_json(root, TASK)
        assert early["retrieval"] == "lexical" and early["items"]
        assert early["note"] == "vectors being embedded after the build: not started; `kbc embed` finishes"
        assert (
            "retrieval: lexical (vectors being embedded after the build: not started; `kbc embed` finishes)"
        ) in early["text"].splitlines()[0]
        status = _status(root)
        assert status["retrieval"] == "lexical" and status["index"]["filling"] == "running"
        assert status["index"]["units"] == pending and "being embedded in the background" in status["note"]

        # A run that embedded a third of the units and was killed writing its next batch.
        where = index_dir(store)
        waiting = pending_of(where, embed_tests=False)
        assert waiting is not None and len(waiting.units) == pending
        third = len(waiting.units) // 3
        embedder = load_embedder(DEFAULT_MODEL)
        assert (
            embed_pending(where, dataclasses.replace(waiting, units=waiting.units[:third]), embedder, set())
            == third
        )
        with (where / PARTIAL).open("ab") as partial:
            partial.write(b'{"ids":["cut-short"],"dim":384}\n' + b"\0" * 100)
        os.kill(pid, signal.SIGKILL)  # killed while it waits
        deadline = time.monotonic() + 30
        while not _gone(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _gone(pid)

    status = _status(root)
    assert status["index"]["filling"] == "stopped" and status["index"]["embedded"] == third
    assert f"stopped at {third} of {pending} units: `kbc embed` goes on from there" in status["note"]

    resumed = invoke("embed", "--repo", str(root))
    assert f"kbc embed: {pending - third} of {pending} units embedded now" in resumed
    assert resumed.rstrip().endswith("retrieval hybrid")
    status = _status(root)
    assert status["retrieval"] == "hybrid" and status["index"]["embedded"] == pending
    assert status["note"] == "" and not (where / PARTIAL).exists()
    assert retrieve_json(root, TASK) == expected  # the same bytes as a build that waited
    assert "no unit waits" in invoke("embed", "--repo", str(root))
    assert not list(tmp_path.rglob("RAN-THE-REPOSITORY-KBC"))


@pytest.mark.slow
def test_the_background_process_fills_the_store_by_itself(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    summary = json.loads(invoke("build", str(root), "--format", "json", "--no-wait"))
    assert summary["index"]["pending"] > 0 and summary["filling"] > 0
    status = _status(root)  # started, if not yet holding its lock (or done already)
    assert status["retrieval"] == "hybrid" or status["index"]["filling"] == "running"
    deadline = time.monotonic() + 120
    while _status(root)["retrieval"] != "hybrid" and time.monotonic() < deadline:
        time.sleep(0.5)
    status = _status(root)
    assert status["retrieval"] == "hybrid" and status["index"]["embedded"] == status["index"]["units"]
    log = (root / ".kbc" / "embedding.log").read_text()
    assert f"{summary['index']['pending']} of {summary['index']['pending']} units embedded now" in log
    assert retrieve_json(root, TASK)["retrieval"] == "hybrid"
    assert not list(tmp_path.rglob("RAN-THE-REPOSITORY-KBC"))


@pytest.mark.slow
def test_a_build_under_the_wait_threshold_embeds_before_it_returns(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    summary = json.loads(invoke("-c", "index.wait_units=100000", "build", str(root), "--format", "json"))
    assert summary["index"]["pending"] == 0 and summary["filling"] == 0
    assert summary["index"]["retrieval"] == "hybrid" and not (root / ".kbc" / "embedding.log").exists()


@pytest.mark.slow
def test_a_killed_embedding_is_started_again_by_the_server_and_only_once(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    settings = load_settings(root)
    summary = json.loads(invoke("build", str(root), "--format", "json", "--no-wait"))
    pid = summary["filling"]
    assert pid > 0 and _status(root)["index"]["filling"] == "running"  # it holds the lock from the start
    os.kill(pid, signal.SIGKILL)  # long before its model is loaded
    deadline = time.monotonic() + 30
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    status = _status(root)
    assert status["retrieval"] == "lexical" and status["index"]["filling"] == "stopped"
    with fill_lock(root / ".kbc"):
        assert resume_filling(root, settings) == 0  # another holds the lock: nothing is started
    assert resume_filling(root, settings) > 0
    assert _status(root)["index"]["filling"] == "running"
    invoke("embed", "--repo", str(root))  # it and the process started take turns
    assert _status(root)["retrieval"] == "hybrid"
    assert resume_filling(root, settings) == 0  # nothing waits to be embedded


@pytest.mark.slow
def test_a_refresh_after_a_stopped_embedding_embeds_what_it_left(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    summary = json.loads(invoke("build", str(root), "--format", "json", "--no-wait"))
    pid = summary["filling"]
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    built = _status(root)
    assert built["index"]["filling"] == "stopped"
    time.sleep(1.1)  # the vectors come in a second later than the build ended
    refreshed = json.loads(invoke("refresh", str(root), "--ci"))
    assert refreshed["path"] == "up-to-date"
    assert "vectors the last build left to embed (its embedding had stopped) are in" in refreshed["reason"]
    filled = _status(root)
    assert filled["retrieval"] == "hybrid"
    assert filled["last_build"] == built["last_build"]  # the build's time, not the vectors'
    again = json.loads(invoke("refresh", str(root), "--ci"))
    assert again["reason"] == "nothing changed since the last build"
