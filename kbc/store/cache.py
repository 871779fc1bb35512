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
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from kbc.domain.models import AnalysisFailed, AnalysisOk, AnalysisResult, AnalysisTask


def cache_key(task: AnalysisTask, blob: str, analyzer_version: str) -> str:
    raw = "\0".join((task.path, task.module, str(task.is_package), blob, analyzer_version))
    return hashlib.sha256(raw.encode()).hexdigest()


class AnalysisCache:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS analysis (key TEXT PRIMARY KEY, data BLOB)")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> AnalysisCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get_many(self, keys: Iterable[str]) -> dict[str, AnalysisResult]:
        wanted = list(keys)
        found: dict[str, AnalysisResult] = {}
        for start in range(0, len(wanted), 500):
            batch = wanted[start:start + 500]
            marks = ",".join("?" * len(batch))
            rows = self._db.execute(
                f"SELECT key, data FROM analysis WHERE key IN ({marks})", batch)
            for key, data in rows:
                try:
                    value = pickle.loads(data)
                except Exception:  # noqa: BLE001 - an unreadable entry is a miss
                    continue
                if isinstance(value, (AnalysisOk, AnalysisFailed)):
                    found[key] = value
        return found

    def put_many(self, items: Iterable[tuple[str, AnalysisResult]]) -> None:
        rows = [(key, pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
                for key, result in items if isinstance(result, (AnalysisOk, AnalysisFailed))]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO analysis VALUES (?, ?)", rows)

    def retain(self, keys: Iterable[str], slack: int = 3) -> None:
        """Drop entries not in ``keys`` once the cache holds ``slack`` times as many."""
        live = set(keys)
        (total,) = self._db.execute("SELECT COUNT(*) FROM analysis").fetchone()
        if total <= slack * max(len(live), 1):
            return
        stale = [k for (k,) in self._db.execute("SELECT key FROM analysis") if k not in live]
        with self._db:
            self._db.executemany("DELETE FROM analysis WHERE key = ?", ((k,) for k in stale))
