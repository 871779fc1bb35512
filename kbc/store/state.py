"""What the last completed build was made from: ``<store>/state.json``, written last and
atomically, so a build killed before the end leaves the previous record and the next
run knows it must do the work again.

A build also says it is under way: ``<store>/building.json`` is written when it starts
and removed once its record is written. Found by a writer that holds the store's lock,
it means a build was stopped before it finished (killed, or failed hard) and what it
left beside the live store must be cleared and its work done again."""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kbc.store.files import write_atomic
from kbc.store.layout import journal_file, state_file


@dataclass(frozen=True, slots=True)
class BuildState:
    commit: str  # HEAD when the build ran ("" outside git)
    tracked: int  # text files the build saw
    settings: str  # hash of the settings that shape the store (a change forces a full rebuild)
    kbc: str  # kbc version
    generation: str = ""  # the facts' generation the build published
    uncommitted: str = ""  # what differed from ``commit`` in the work tree the build read (a digest)
    finished: float = 0.0  # when the build completed (Unix time; 0: a record from before it was kept)


def read_state(store_root: Path) -> BuildState | None:
    try:
        data = json.loads(state_file(store_root).read_text(encoding="utf-8"))
        return BuildState(**data)
    except (OSError, ValueError, TypeError):
        return None


def finished_at(store_root: Path, state: BuildState) -> float:
    """When the build ``state`` records completed: as it says, else (an older record) when
    its record was written."""
    if state.finished:
        return state.finished
    try:
        return os.stat(state_file(store_root)).st_mtime
    except OSError:
        return 0.0


def write_state(store_root: Path, state: BuildState) -> None:
    write_atomic(state_file(store_root), json.dumps(asdict(state), sort_keys=True))


def begin_build(store_root: Path, mode: str) -> None:
    """Say a build (``mode``: why it runs) is under way."""
    write_atomic(
        journal_file(store_root),
        json.dumps({"pid": os.getpid(), "started": time.time(), "mode": mode}, sort_keys=True),
    )


def end_build(store_root: Path) -> None:
    journal_file(store_root).unlink(missing_ok=True)


def unfinished_build(store_root: Path) -> dict[str, Any] | None:
    """What the journal of a build that has not completed says (None: no such build)."""
    path = journal_file(store_root)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
