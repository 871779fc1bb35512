"""A first build of a large repository answers from its first index (cut at the definitions
CPython's parser reads) before the facts pass; the process after the build reads the facts,
views and vectors, and the slice is then the one a build that waited for every pass gives."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_background_embedding import TASK, _gone, _repo, _status
from test_build_retrieve import invoke, retrieve_json

from kbc.cli.main import cli
from kbc.store.lock import fill_lock, filling

FIRST = ("-c", "index.first_files=1")  # the shop has more Python files than that


@pytest.mark.slow
def test_a_first_index_answers_at_once_and_a_refresh_reads_what_its_stopped_process_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KBC_EMBED_MODEL", "none")
    waited = _repo(tmp_path / "waited")
    invoke(*FIRST, "build", str(waited), "--wait")  # every pass before it returns: today's build
    expected = retrieve_json(waited, TASK)

    root = _repo(tmp_path / "repo")
    store = root / ".kbc"
    store.mkdir(exist_ok=True)
    with fill_lock(store):  # as if another process held it: the one started waits for it
        summary = json.loads(invoke(*FIRST, "build", str(root), "--format", "json"))
        assert summary["later"] == "facts" and summary["filling"] > 0
        assert summary["analyze"]["symbols"] == 0 and summary["views"]["views"] == 0
        assert [p["name"] for p in summary["passes"]] == ["discover", "secrets", "chunk", "lexical index"]

        early = retrieve_json(root, TASK)
        assert early["items"] and early["retrieval"] == "lexical"
        assert early["note"].startswith("the first index: cut at the definitions CPython's parser reads")
        assert "retrieval: lexical (the first index:" in early["text"].splitlines()[0]
        assert not any(item["path"].startswith("@views/") for item in early["items"])
        status = _status(root)
        assert status["index"]["later"] == "running" and not status["built"]
        assert status["views"] == {} and "being read in the background" in status["note"]
        assert "facts:" not in status["note"]  # no facts yet is what a first index is, not a fault
        os.kill(summary["filling"], signal.SIGKILL)
        deadline = time.monotonic() + 30
        while not _gone(summary["filling"]) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _gone(summary["filling"])

    status = _status(root)
    assert status["index"]["later"] == "stopped" and "`kbc refresh` reads them" in status["note"]
    stopped = CliRunner().invoke(cli, ["symbols", "validate_refund", "--repo", str(root)])
    assert stopped.exit_code != 0 and "left unread" in stopped.output and "kbc refresh" in stopped.output
    invoke("refresh", str(root), "--ci")
    status = _status(root)
    assert "later" not in status["index"] and status["built"] and status["views"]
    assert retrieve_json(root, TASK) == expected  # the same bytes as a build that waited


@pytest.mark.slow
def test_the_process_after_a_first_index_leaves_the_store_a_waited_build_leaves(tmp_path: Path) -> None:
    waited = _repo(tmp_path / "waited")
    invoke(*FIRST, "build", str(waited), "--wait")
    expected = retrieve_json(waited, TASK)
    assert expected["retrieval"] == "hybrid"

    root = _repo(tmp_path / "repo")
    summary = json.loads(invoke(*FIRST, "build", str(root), "--format", "json"))
    assert summary["later"] == "facts" and summary["filling"] > 0
    deadline = time.monotonic() + 240
    while (filling(root / ".kbc") or _status(root)["retrieval"] != "hybrid") and time.monotonic() < deadline:
        time.sleep(0.5)
    status = _status(root)
    assert status["retrieval"] == "hybrid" and status["note"] == "" and status["built"]
    assert retrieve_json(root, TASK) == expected
    log = (root / ".kbc" / "embedding.log").read_text()
    assert "units embedded now" in log


@pytest.mark.slow
def test_a_command_that_reads_the_facts_waits_for_them_after_a_first_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KBC_EMBED_MODEL", "none")
    root = _repo(tmp_path / "repo")
    store = root / ".kbc"
    store.mkdir(exist_ok=True)
    command = [sys.executable, "-m", "kbc", "symbols", "validate_refund", "--repo", str(root)]
    with fill_lock(store):  # the process after the build waits for it: no facts come meanwhile
        summary = json.loads(invoke(*FIRST, "build", str(root), "--format", "json"))
        assert summary["later"] == "facts" and summary["analyze"]["symbols"] == 0
        reading = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert reading.stderr is not None
        said = ""
        for line in iter(reading.stderr.readline, ""):  # ends early only if the command ends
            if "waiting for the facts" in line:
                said = line
                break
        assert said and reading.poll() is None  # it says why it does not answer, and waits
    out, err = reading.communicate(timeout=240)
    assert reading.returncode == 0, err
    assert "shop.refunds.validate_refund" in out and "shop/refunds.py:" in out
    assert "later" not in _status(root)["index"]  # the facts are in
