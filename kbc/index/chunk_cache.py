"""The chunk cache: each file's chunks, keyed by everything that decides them.

A file's chunks (and their lexical columns, and how many credentials its redaction took
out) are a function of its content, its path, language and role, the definitions its
facts give (or the outline ``ast`` reads), the credentials found elsewhere that it must
not show, and the chunker's layout. :func:`chunk_key` hashes those, so a file whose
content comes back (a branch switched to and back, a commit reverted) is not read, redacted,
cut and tokenized again: its chunks come from here. Entries are pickled values in SQLite,
private to one store; a killed run leaves the entries it committed.

The cache keeps the entries of the files indexed now and, while it holds at most
``SLACK`` times as many, those of earlier states too; past that, the entries used least
recently go first.
"""

from __future__ import annotations

import hashlib
import pickle
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from kbc.domain.progress import PassReport
from kbc.index.prepare import ChunkTask, Prepared, run_tasks
from kbc.store.cache import mark_used, retain_recent, values_digest
from kbc.store.files import connect

SLACK = 3  # entries kept: up to this many times the files indexed now


def chunk_key(task: ChunkTask, blob: str, layout: str) -> str:
    """What decides a file's chunks: its content (``blob``), what the task says of it (not
    where the work tree is), and the chunker's ``layout``."""
    definitions = (
        "\1".join(
            "\0".join(
                (d.qname, d.name, d.kind, str(d.start), str(d.end), d.signature, str(d.is_async), d.language)
            )
            for d in task.definitions
        )
        if task.definitions is not None
        else "\2"
    )
    raw = "\0".join(
        (
            layout,
            task.path,
            blob,
            task.language,
            task.module,
            task.role,
            str(task.scan),
            str(task.outlined),
            str(task.size),
            str(task.overlap),
            values_digest(task.also),
            hashlib.sha256(definitions.encode("utf-8", "surrogatepass")).hexdigest(),
        )
    )
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class ChunkCache:
    def __init__(self, path: Path) -> None:
        self._db = connect(path)
        self._db.execute("CREATE TABLE IF NOT EXISTS chunks (key TEXT PRIMARY KEY, used REAL, data BLOB)")
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")

    def forget_if_exposed(self, credentials: Iterable[str]) -> bool:
        """Drop every entry when the credential values found in the repository are not those
        the entries were cut knowing (a value that became a credential elsewhere may stand in
        an entry of an earlier state unredacted); True when they were not. Only a digest of
        the values is kept."""
        digest = values_digest(credentials)
        row = self._db.execute("SELECT value FROM meta WHERE key = 'credentials'").fetchone()
        if (row[0] if row else "") == digest:
            return False
        with self._db:
            self._db.execute("DELETE FROM chunks")
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('credentials', ?)", (digest,))
        return True

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ChunkCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get_many(self, keys: Iterable[str]) -> dict[str, Prepared]:
        """The entries held of ``keys`` (each marked used now)."""
        wanted = list(keys)
        found: dict[str, Prepared] = {}
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            marks = ",".join("?" * len(batch))
            for key, data in self._db.execute(f"SELECT key, data FROM chunks WHERE key IN ({marks})", batch):
                try:
                    value = pickle.loads(data)
                except Exception:
                    continue
                if isinstance(value, tuple) and len(value) == 4:
                    found[key] = value
        mark_used(self._db, "chunks", found)
        return found

    def put_many(self, items: Sequence[tuple[str, Prepared]]) -> None:
        now = time.time()
        rows = [(key, now, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)) for key, value in items]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO chunks VALUES (?, ?, ?)", rows)

    def retain(self, keys: Iterable[str], slack: int = SLACK) -> int:
        """Keep the entries of ``keys`` and, up to ``slack`` times as many entries in all, the
        most recently used of the rest; returns how many were dropped."""
        return retain_recent(self._db, "chunks", keys, slack)


def chunk_through_cache(
    tasks: Sequence[ChunkTask],
    keys: Mapping[str, str],
    cache: Path | None,
    workers: int,
    chunking: PassReport,
    *,
    fresh: bool = False,
) -> tuple[list[Prepared], int]:
    """Each task's chunks, in task order, from the ``cache`` (a SQLite file; None: no cache)
    where it holds the task's key (``keys``: path -> key), cut now otherwise and kept there;
    and how many came from the cache. ``fresh`` reads nothing from it. The cache keeps the
    entries of every key in ``keys`` (the files indexed now) and, within its bound, others."""
    if cache is None:
        return run_tasks(list(tasks), workers, chunking.advance), 0
    with ChunkCache(cache) as held:
        found = {} if fresh else held.get_many(keys[t.path] for t in tasks)
        misses = [t for t in tasks if keys[t.path] not in found]
        chunking.skip(len(tasks) - len(misses))
        made = run_tasks(misses, workers, chunking.advance)
        held.put_many([(keys[t.path], result) for t, result in zip(misses, made, strict=True)])
        held.retain(keys.values())
    cut = {t.path: result for t, result in zip(misses, made, strict=True)}
    return [cut[t.path] if t.path in cut else found[keys[t.path]] for t in tasks], len(tasks) - len(misses)
