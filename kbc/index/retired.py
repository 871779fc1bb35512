"""Vectors no index needs now, kept for the state that needed them to come back.

A vector is addressed by its unit's content and the model (:func:`kbc.index.units.unit_id`),
so when a branch is switched to and back, or a change is reverted, the units of the earlier
state are the same units. Once a build publishes an index that no longer needs some vectors,
they are retired rather than deleted: the vector store keeps them (retrieval never sees
them: it searches the snapshot of the units the index names, :mod:`kbc.index.exact`) and a
later index that needs them again takes them back instead of embedding them. The store keeps
as many retired vectors as ``KEEP`` times the units the index needs, and at least ``FLOOR``
(about 15 MB of 384-wide vectors); past that, those retired longest ago are deleted.
``retired.sqlite`` beside the index records when each was retired.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path

from kbc.index.vectors import VectorStore
from kbc.store.files import connect

RETIRED = "retired.sqlite"
KEEP = 2.0  # retired vectors kept: up to this many times the units the index needs
FLOOR = 10_000  # and at least this many


def _open(index_dir: Path) -> sqlite3.Connection:
    db = connect(index_dir / RETIRED)
    db.execute("CREATE TABLE IF NOT EXISTS retired (unit TEXT PRIMARY KEY, since REAL)")
    db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
    return db


def keep_none_next(index_dir: Path) -> None:
    """Have the next :func:`retire` delete every vector no index needs, keeping none: the
    credentials found in the repository changed, and a unit's stored text from before may
    show a value that is a credential now (the vectors an index needs are redacted anew)."""
    db = _open(index_dir)
    try:
        with db:
            db.execute("INSERT OR REPLACE INTO meta VALUES ('keep', 'none')")
    finally:
        db.close()


def retired_units(index_dir: Path) -> set[str]:
    """The units whose vectors were retired and are still kept."""
    if not (index_dir / RETIRED).is_file():
        return set()
    db = connect(index_dir / RETIRED)
    try:
        return {unit for (unit,) in db.execute("SELECT unit FROM retired")}
    except sqlite3.OperationalError:  # the table is made by the first retire
        return set()
    finally:
        db.close()


def retire(
    index_dir: Path,
    vectors: VectorStore,
    unneeded: Iterable[str],
    needed: int,
    *,
    keep: float = KEEP,
    floor: int = FLOOR,
) -> int:
    """Record the vectors the published index does not need (``unneeded``: every one the store
    holds that it does not name) as retired, keeping when each was first retired, and delete
    from the store those retired longest ago past ``keep`` times ``needed`` (and ``floor``);
    returns how many were deleted. A unit needed again is no longer retired."""
    now = time.time()
    db = _open(index_dir)
    try:
        if db.execute("SELECT value FROM meta WHERE key = 'keep'").fetchone() is not None:
            keep, floor = 0.0, 0
        since: dict[str, float] = dict(db.execute("SELECT unit, since FROM retired"))
        kept = {unit: since.get(unit, now) for unit in set(unneeded)}
        order = sorted(kept, key=lambda unit: (-kept[unit], unit))  # newest first
        dropped = order[max(int(keep * needed), floor) :]
        if dropped:
            vectors.delete(dropped)
        for unit in dropped:
            del kept[unit]
        with db:
            db.execute("DELETE FROM meta WHERE key = 'keep'")
            db.execute("DELETE FROM retired")
            db.executemany("INSERT INTO retired VALUES (?, ?)", sorted(kept.items()))
    finally:
        db.close()
    return len(dropped)
