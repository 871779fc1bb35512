"""What the last completed build was made from: ``<store>/state.json``, written last and
atomically, so a build killed before the end leaves the previous record and the next
run knows it must do the work again."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from kbc.store.files import write_atomic
from kbc.store.layout import state_file


@dataclass(frozen=True, slots=True)
class BuildState:
    commit: str  # HEAD when the build ran ("" outside git)
    tracked: int  # text files the build saw
    settings: str  # hash of the settings that shape the store (a change forces a full rebuild)
    kbc: str  # kbc version


def read_state(store_root: Path) -> BuildState | None:
    try:
        data = json.loads(state_file(store_root).read_text(encoding="utf-8"))
        return BuildState(**data)
    except (OSError, ValueError, TypeError):
        return None


def write_state(store_root: Path, state: BuildState) -> None:
    write_atomic(state_file(store_root), json.dumps(asdict(state), sort_keys=True))
