"""The rerank cache: a reranker's order of a task's candidates, keyed by the model, the task
and the candidates' texts (:func:`kbc.retrieval.rerank.cache_key`), so a request asked again
gives the same slice without another call."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

from kbc.store.files import connect

KEPT = 20_000  # orders kept; past it the oldest go


class RerankCache:
    def __init__(self, path: Path) -> None:
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        try:
            self._db = connect(path, shared=True)
            self._db.execute("CREATE TABLE IF NOT EXISTS rerank (key TEXT PRIMARY KEY, data TEXT)")
        except (sqlite3.Error, OSError):  # an unreadable cache is no cache, never a failed slice
            self._db = None

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def get(self, key: str) -> list[int] | None:
        with self._lock:
            if self._db is None:
                return None
            try:
                row = self._db.execute("SELECT data FROM rerank WHERE key = ?", (key,)).fetchone()
                value = json.loads(row[0]) if row is not None else None
            except (sqlite3.Error, json.JSONDecodeError):
                return None
        if not isinstance(value, list) or not all(isinstance(i, int) for i in value):
            return None
        return value

    def put(self, key: str, order: list[int]) -> None:
        with self._lock:
            if self._db is None:
                return
            try:
                with self._db:
                    self._db.execute("INSERT OR REPLACE INTO rerank VALUES (?, ?)", (key, json.dumps(order)))
                    self._db.execute(
                        "DELETE FROM rerank WHERE rowid <= (SELECT max(rowid) FROM rerank) - ?", (KEPT,)
                    )
            except sqlite3.Error:
                return
