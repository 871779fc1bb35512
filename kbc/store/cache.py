"""The analysis cache: per-file results keyed by what determines them.

The key hashes the file's path, module name, blob id and the analyzer
version, so a file is parsed again only when one of those changes. SQLite
keeps each write atomic; a killed run leaves the entries it committed.
Entries are pickled result values: the cache is private to one store, and a
pickle loads many times faster than JSON rebuilt into dataclasses.
"""

from __future__ import annotations

import hashlib
import pickle
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
        self._db.execute("CREATE TABLE IF NOT EXISTS analysis (key TEXT PRIMARY KEY, data BLOB)")
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
        return found

    def put_many(self, items: Iterable[tuple[str, AnalysisResult]]) -> None:
        rows = [
            (key, pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
            for key, result in items
            if isinstance(result, (AnalysisOk, AnalysisFailed))
        ]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO analysis VALUES (?, ?)", rows)

    def secret_counts(self, keys: Iterable[str]) -> dict[str, int]:
        return {key: int(found) for key, found in self._rows("secrets", "found", keys)}

    def put_secret_counts(self, items: Iterable[tuple[str, int]]) -> None:
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO secrets VALUES (?, ?)", list(items))

    def retain(self, keys: Iterable[str], slack: int = 3) -> None:
        """Drop entries not in ``keys`` once the cache holds ``slack`` times as many."""
        live = set(keys)
        (total,) = self._db.execute("SELECT COUNT(*) FROM analysis").fetchone()
        if total <= slack * max(len(live), 1):
            return
        stale = [k for (k,) in self._db.execute("SELECT key FROM analysis") if k not in live]
        with self._db:
            self._db.executemany("DELETE FROM analysis WHERE key = ?", ((k,) for k in stale))
