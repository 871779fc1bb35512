"""The analysis cache: per-file results keyed by what determines them.

The key hashes the file's path, module name, blob id and the analyzer
version, so a file is parsed again only when one of those changes. SQLite
keeps each write atomic; a killed run leaves the entries it committed.
Entries are pickled result values: the cache is private to one store, and a
pickle loads many times faster than JSON rebuilt into dataclasses. Entries no
build needs now are kept up to a few times the current ones, the most recently
used first (:func:`retain_recent`): a branch switched to and back finds its own.
"""

from __future__ import annotations

import hashlib
import pickle
import sqlite3
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from kbc.domain.models import AnalysisFailed, AnalysisOk, AnalysisResult, AnalysisTask
from kbc.store.files import connect


def cache_key(task: AnalysisTask, blob: str, analyzer_version: str) -> str:
    raw = "\0".join(
        (task.path, task.module, str(task.is_package), blob, analyzer_version, values_digest(task.also))
    )
    return hashlib.sha256(raw.encode()).hexdigest()


def values_digest(values: Iterable[str]) -> str:
    """A digest of credential values (so a key changes with them; the values are not kept)."""
    joined = "\0".join(sorted(values))
    return hashlib.sha256(joined.encode()).hexdigest()[:16] if joined else ""


class AnalysisCache:
    def __init__(self, path: Path) -> None:
        self._db = connect(path)
        self._db.execute("CREATE TABLE IF NOT EXISTS analysis (key TEXT PRIMARY KEY, data BLOB, used REAL)")
        if "used" not in {row[1] for row in self._db.execute("PRAGMA table_info(analysis)")}:
            with self._db:  # a cache written before entries were dated: all as old as each other
                self._db.execute("ALTER TABLE analysis ADD COLUMN used REAL DEFAULT 0")
        # how many credentials a file's content holds (never the values): 0 spares a rescan
        self._db.execute("CREATE TABLE IF NOT EXISTS secrets (key TEXT PRIMARY KEY, found INTEGER)")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> AnalysisCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _rows(self, table: str, column: str, keys: Iterable[str]) -> Iterator[tuple[str, Any]]:
        """(key, column) of the rows of ``table`` whose key is among ``keys``, in batches."""
        wanted = list(keys)
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            marks = ",".join("?" * len(batch))
            yield from self._db.execute(f"SELECT key, {column} FROM {table} WHERE key IN ({marks})", batch)

    def get_many(self, keys: Iterable[str]) -> dict[str, AnalysisResult]:
        found: dict[str, AnalysisResult] = {}
        for key, data in self._rows("analysis", "data", keys):
            try:
                value = pickle.loads(data)
            except Exception:
                continue
            if isinstance(value, (AnalysisOk, AnalysisFailed)):
                found[key] = value
        mark_used(self._db, "analysis", found)
        return found

    def put_many(self, items: Iterable[tuple[str, AnalysisResult]]) -> None:
        now = time.time()
        rows = [
            (key, pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL), now)
            for key, result in items
            if isinstance(result, (AnalysisOk, AnalysisFailed))
        ]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO analysis (key, data, used) VALUES (?, ?, ?)", rows)

    def secret_counts(self, keys: Iterable[str]) -> dict[str, int]:
        return {key: int(found) for key, found in self._rows("secrets", "found", keys)}

    def put_secret_counts(self, items: Iterable[tuple[str, int]]) -> None:
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO secrets VALUES (?, ?)", list(items))

    def retain(self, keys: Iterable[str], slack: int = 3) -> int:
        """Keep the entries of ``keys`` and, up to ``slack`` times as many in all, the most
        recently used of the rest (the facts of the branches switched between last); returns
        how many were dropped."""
        return retain_recent(self._db, "analysis", keys, slack)


def mark_used(db: sqlite3.Connection, table: str, keys: Iterable[str]) -> None:
    """Date the rows of ``keys`` in ``table`` (a key and a ``used`` column) as used now."""
    now = time.time()
    with db:
        db.executemany(f"UPDATE {table} SET used = ? WHERE key = ?", ((now, k) for k in keys))


def retain_recent(db: sqlite3.Connection, table: str, keys: Iterable[str], slack: int) -> int:
    """Keep the rows of ``keys`` and, up to ``slack`` times as many rows in all, the most
    recently used of the rest; drop the others, least recently used first. Returns how many
    were dropped."""
    live = set(keys)
    limit = slack * max(len(live), 1)
    mark_used(db, table, live)  # what is current now is what was used last
    (total,) = db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
    if total <= limit:
        return 0
    others = [k for (k,) in db.execute(f"SELECT key FROM {table} ORDER BY used DESC, key") if k not in live]
    dropped = others[max(limit - len(live), 0) :]
    with db:
        db.executemany(f"DELETE FROM {table} WHERE key = ?", ((k,) for k in dropped))
    return len(dropped)
