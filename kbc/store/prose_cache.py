"""The interpretation cache: an LLM's validated prose keyed by (facts hash, prompt version, model).

A build over unchanged code finds every view's prose here and makes no LLM call.
Each entry is committed as soon as it arrives, so a killed build keeps what it paid for.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from kbc.store.files import connect


def prose_key(kind: str, facts_hash: str, prompt_version: str, model: str) -> str:
    return hashlib.sha256("\0".join((kind, facts_hash, prompt_version, model)).encode()).hexdigest()


class ProseCache:
    def __init__(self, path: Path) -> None:
        self._db = connect(path)
        self._db.execute("CREATE TABLE IF NOT EXISTS prose (key TEXT PRIMARY KEY, data TEXT)")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ProseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT data FROM prose WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            value = json.loads(row[0])
        except json.JSONDecodeError:  # an unreadable entry is a miss
            return None
        return value if isinstance(value, dict) else None

    def put(self, key: str, interpretation: dict[str, Any]) -> None:
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO prose VALUES (?, ?)",
                (key, json.dumps(interpretation, sort_keys=True)),
            )
