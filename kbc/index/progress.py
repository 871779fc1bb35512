"""What a published index still waits for, and how far the vectors a build left to embed have
come (``embedding.json`` beside the index): written by the process filling them in
(:mod:`kbc.index.fill`), read by retrieval and status."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from kbc.store.files import write_atomic

PROGRESS = "embedding.json"
# meta: the passes a first index waits for ("facts", or "facts no-llm" for a build without the
# LLM; "" when none): the facts, views and team knowledge (kbc.services.first)
LATER = "later"


def first_index_note(vectors: bool) -> str:
    """What a slice of a first index says of it (``vectors``: they come after the facts)."""
    then = ", then the vectors," if vectors else ""
    return (
        "the first index: cut at the definitions CPython's parser reads; the facts (calls, imports), "
        f"the views and team knowledge{then} are read after the build; `kbc refresh` finishes"
    )


@dataclass(frozen=True, slots=True)
class Progress:
    model: str
    state: str  # the state of the index being filled
    units: int
    embedded: int
    pid: int
    updated: float  # seconds since the epoch


def read_progress(index_dir: Path) -> Progress | None:
    try:
        return Progress(**json.loads((index_dir / PROGRESS).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def write_progress(index_dir: Path, progress: Progress) -> None:
    write_atomic(index_dir / PROGRESS, json.dumps(asdict(progress), sort_keys=True))


def progress_of(index_dir: Path, state: str, model: str) -> Progress | None:
    """The progress of filling the index of ``state`` with ``model``'s vectors (None when no
    process has reported on it)."""
    found = read_progress(index_dir)
    return found if found is not None and found.state == state and found.model == model else None
