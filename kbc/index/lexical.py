"""The lexical index: SQLite FTS5 with BM25, beside the chunk table.

FTS5 is in the standard library's sqlite3, persists to one file and updates
row by row, so a refresh rewrites only the chunks of changed files. Text is
tokenized by :mod:`kbc.index.tokens` before it reaches FTS5 (identifiers whole
and split), so FTS5 only splits on the spaces between those tokens.

A build never writes the live file: it copies it (:meth:`LexicalIndex.copy_to`),
changes the copy and renames it into place when the whole build is ready, so a
reader sees one build or the next and a killed build leaves the live file as it
was. The file is in rollback-journal mode for that reason: a WAL file, kept
under the live name, would belong to the file the rename replaced.
"""

from __future__ import annotations

import functools
import json
import math
import re
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kbc.domain.errors import IndexDamaged
from kbc.domain.models import Chunk
from kbc.index.remembered import Remembered
from kbc.index.tokens import path_tokens, tokens
from kbc.store.files import connect

SCHEMA = """
CREATE TABLE IF NOT EXISTS chunks (
    rid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, path TEXT NOT NULL,
    start_line INTEGER, end_line INTEGER,
    kind TEXT, language TEXT, heading TEXT, module TEXT, symbols TEXT, role TEXT, tokens INTEGER,
    text TEXT, unit TEXT, context TEXT);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    path, symbols, body, context, tokenize = "porter unicode61 tokenchars '_'");
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, blob TEXT, date TEXT, secrets INTEGER);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
"""
SCHEMA_VERSION = 7  # PRAGMA user_version; another value means another kbc wrote the file
# bm25() column weights: path, symbols, body, context (a class outline's member signatures).
WEIGHTS = (2.0, 3.0, 1.0, 0.3)
COLUMNS = (
    "id, path, start_line, end_line, kind, language, heading, module, symbols, role, tokens, text, "
    "unit, context"
)
MAX_QUERY_TERMS = 256
TIE_MARGIN = 64  # rows fetched past a search's limit, to see every row tied at the cut
PRECEDENTS = "precedents"  # meta: the latest commits' message words and the indexed files they changed
PENDING = "pending"  # meta: the model whose vectors the index waits for ("" when none)


def move_aside(path: Path) -> Path:
    """Move a damaged index (with its journal files) to ``<name>.broken-<time>``; never delete."""
    aside = path.with_name(f"{path.name}.broken-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}")
    for suffix in ("-wal", "-shm"):
        journal = path.with_name(path.name + suffix)
        if journal.exists():
            journal.rename(aside.with_name(aside.name + suffix))
    path.rename(aside)
    return aside


@dataclass(frozen=True, slots=True)
class FileRecord:
    path: str
    blob: str
    date: str  # last commit date, YYYY-MM-DD, "" when unknown
    secrets: int  # credentials redacted in it


def _row(chunk: Chunk) -> tuple[object, ...]:
    return (
        chunk.id,
        chunk.path,
        chunk.start_line,
        chunk.end_line,
        chunk.kind,
        chunk.language,
        chunk.heading,
        chunk.module,
        json.dumps(list(chunk.symbols)),
        chunk.role,
        chunk.tokens,
        chunk.text,
        chunk.unit,
        chunk.context,
    )


def _chunk(row: Sequence[Any]) -> Chunk:
    (cid, path, start, end, kind, language, heading, module, symbols, role, tokens, text, unit, context) = row
    return Chunk(
        cid,
        path,
        start,
        end,
        kind,
        language,
        text,
        heading,
        module,
        tuple(json.loads(symbols)),
        role,
        tokens,
        unit,
        context,
    )


_IMPORT_LINE = re.compile(r"^(?:from\s+\S+\s+import\b|import\s)")


def split_imports(text: str) -> tuple[str, str]:
    """A module prelude's text without its top-level import statements, and those statements:
    imports name what other modules define, not what this one does."""
    kept: list[str] = []
    imports: list[str] = []
    depth = 0
    continued = False
    for line in text.splitlines(keepends=True):
        if depth > 0 or continued or _IMPORT_LINE.match(line):
            imports.append(line)
            depth = max(0, depth + line.count("(") - line.count(")"))
            continued = line.rstrip().endswith("\\")
        else:
            kept.append(line)
    return "".join(kept), "".join(imports)


def indexed_columns(chunk: Chunk) -> tuple[str, str, str, str]:
    """The four FTS columns of a chunk: path words, names it defines, its text, and what weighs
    little (a class outline's member signatures, a prelude's imports)."""
    body, context = chunk.text, chunk.context
    if chunk.unit == "prelude" and chunk.language == "python":
        body, imports = split_imports(body)
        context = context + "\n" + imports if context else imports
    return (
        " ".join(path_tokens(chunk.path)),
        " ".join(t for s in chunk.symbols for t in tokens(s.rsplit(".", 1)[-1])),
        " ".join(tokens(chunk.heading + "\n" + body)),
        " ".join(tokens(context)),
    )


def query_terms(query: str) -> list[str]:
    """The distinct search tokens of ``query``, in order, at most ``MAX_QUERY_TERMS``, each
    quoted as an FTS5 phrase (so none is syntax)."""
    return list(_query_terms(query))


@functools.lru_cache(maxsize=64)
def _query_terms(query: str) -> tuple[str, ...]:
    # Cached: one request reads the same query's terms for its search, their frequencies and
    # the coverage of its candidates.
    seen: dict[str, None] = {}
    for token in tokens(query):
        seen.setdefault(token, None)
        if len(seen) >= MAX_QUERY_TERMS:
            break
    return tuple(f'"{t}"' for t in seen)


def match_expression(query: str) -> str:
    """An FTS5 query that ORs the distinct tokens of ``query``."""
    return " OR ".join(query_terms(query))


class LexicalIndex:
    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            # One index may serve several threads (an MCP server); callers serialise access.
            self.db = connect(path, shared=True, wal=False)
        except sqlite3.DatabaseError as exc:
            raise IndexDamaged(
                f"the lexical index {path} is damaged ({exc})",
                hint="run `kbc build`: it moves a damaged index aside and indexes again",
            ) from exc
        try:
            (version,) = self.db.execute("PRAGMA user_version").fetchone()
            (tables,) = self.db.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'chunks'").fetchone()
        except sqlite3.DatabaseError as exc:
            self.db.close()
            raise IndexDamaged(
                f"the lexical index {path} is damaged ({exc})",
                hint="run `kbc build`: it moves a damaged index aside and indexes again",
            ) from exc
        self.stale = bool(tables) and version != SCHEMA_VERSION
        self._remembered: Remembered | None = None
        if not tables:  # a reader of a whole index writes nothing
            self._create()

    def _create(self) -> None:
        self.db.executescript(SCHEMA)
        self.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        self.db.commit()

    def reset(self) -> None:
        """Drop everything (an index written by another kbc version) and start empty."""
        for table in ("fts", "chunks", "files", "meta"):
            self.db.execute(f"DROP TABLE IF EXISTS {table}")
        self._create()
        self.stale = False
        self._forget()

    def close(self) -> None:
        self.db.close()

    def copy_to(self, target: Path) -> None:
        """Write a copy of this index as it is now to ``target`` (replaced if it exists), in
        rollback-journal mode."""
        for suffix in ("", "-journal", "-wal", "-shm"):
            target.with_name(target.name + suffix).unlink(missing_ok=True)
        copy = sqlite3.connect(target)
        try:
            self.db.backup(copy)
            copy.execute("PRAGMA journal_mode=DELETE")
            copy.commit()
        finally:
            copy.close()

    def pin(self) -> None:
        """Read this index as it is now until closed: later commits (a build running in
        another process) stay out of sight, so every answer comes from one build."""
        if not self.db.in_transaction:
            self.db.execute("BEGIN")
        self.db.execute("SELECT COUNT(*) FROM meta").fetchone()

    def remember(self) -> None:
        """Pin the index and keep, from then on, what searches read (each query term's scores
        by row, the chunks): for a reader that answers many queries. The answers are the
        same as without it, to the last bit of every score."""
        self.pin()
        if self._remembered is None:
            self._remembered = Remembered(self.db)

    # -- metadata and files -------------------------------------------------

    def meta(self, key: str) -> str:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else ""

    def precedents(self) -> list[tuple[list[str], list[str]]]:
        """What the build read of the latest commits (:func:`kbc.index.history.commit_messages`);
        empty when it read none, or for an index written before precedents were kept."""
        try:
            return [
                (list(map(str, words)), list(map(str, paths)))
                for words, paths in json.loads(self.meta(PRECEDENTS) or "[]")
            ]
        except (ValueError, TypeError):  # not what a build writes: no precedents
            return []

    def files(self) -> dict[str, FileRecord]:
        return {r[0]: FileRecord(*r) for r in self.db.execute("SELECT path, blob, date, secrets FROM files")}

    # -- reading ------------------------------------------------------------

    def chunk_ids(self, paths: Iterable[str] | None = None) -> list[str]:
        if paths is None:
            return [r[0] for r in self.db.execute("SELECT id FROM chunks")]
        out: list[str] = []
        for path in paths:
            out.extend(r[0] for r in self.db.execute("SELECT id FROM chunks WHERE path = ?", (path,)))
        return out

    def chunk_ids_under(self, prefix: str) -> list[str]:
        """The ids of the chunks whose path starts with ``prefix``."""
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return [
            r[0]
            for r in self.db.execute("SELECT id FROM chunks WHERE path LIKE ? ESCAPE '\\'", (escaped + "%",))
        ]

    def chunks(self, ids: Sequence[str]) -> dict[str, Chunk]:
        if self._remembered is not None:
            return self._remembered.read(ids, self._read_chunks)
        return self._read_chunks(ids)

    def _read_chunks(self, ids: Sequence[str]) -> dict[str, Chunk]:
        found: dict[str, Chunk] = {}
        for start in range(0, len(ids), 500):
            batch = list(ids[start : start + 500])
            marks = ",".join("?" * len(batch))
            for row in self.db.execute(f"SELECT {COLUMNS} FROM chunks WHERE id IN ({marks})", batch):
                chunk = _chunk(row)
                found[chunk.id] = chunk
        return found

    def openings(self) -> list[Chunk]:
        """The chunks of code that open a file (line 1), by path."""
        rows = self.db.execute(
            f"SELECT {COLUMNS} FROM chunks WHERE start_line = 1 AND kind = 'code' ORDER BY path"
        )
        return [_chunk(r) for r in rows]

    def all_chunks(self) -> list[Chunk]:
        return [_chunk(r) for r in self.db.execute(f"SELECT {COLUMNS} FROM chunks ORDER BY path, start_line")]

    def search(self, query: str, limit: int) -> list[tuple[str, float]]:
        """(chunk id, BM25 score: higher is better), best first; ties broken by id.

        FTS5 ranks alone and only the best rows are joined to their ids (joining every
        match first costs as much as the ranking). Rows tied with the last one kept are
        all fetched, so which of them make the cut is decided by id, not by FTS5.
        """
        terms = query_terms(query)
        if not terms or limit < 1:
            return []
        weights = ", ".join(str(w) for w in WEIGHTS)
        if self._remembered is not None:
            return self._remembered.search(terms, weights, limit)
        expression = " OR ".join(terms)
        scored = f"SELECT rowid, bm25(fts, {weights}) AS score FROM fts WHERE fts MATCH ?"
        fetch = limit + TIE_MARGIN
        rows = self.db.execute(f"{scored} ORDER BY score LIMIT ?", (expression, fetch)).fetchall()
        if len(rows) > limit:
            cut = rows[limit - 1][1]
            if rows[-1][1] == cut and len(rows) == fetch:  # the tie may run on past what was fetched
                rows = [r for r in rows if r[1] < cut]
                rows += self.db.execute(
                    f"SELECT * FROM ({scored}) WHERE score = ?", (expression, cut)
                ).fetchall()
            else:
                rows = [r for r in rows if r[1] <= cut]
        score = dict(rows)
        if not score:
            return []
        marks = ",".join("?" * len(score))
        ids = self.db.execute(f"SELECT id, rid FROM chunks WHERE rid IN ({marks})", list(score)).fetchall()
        ranked = sorted(((score[rid], str(cid)) for cid, rid in ids))[:limit]
        return [(cid, -float(value)) for value, cid in ranked]

    def frequencies(self, query: str) -> tuple[dict[str, int], int]:
        """How many chunks hold each distinct search token of ``query`` (as :meth:`search`
        reads it), and how many chunks there are."""
        terms = query_terms(query)
        if self._remembered is not None:
            weights = ", ".join(str(w) for w in WEIGHTS)
            counts = {t[1:-1]: len(self._remembered.postings_of(t, weights)[0]) for t in terms}
            return counts, self._remembered.count()
        counts = {
            t[1:-1]: int(self.db.execute("SELECT COUNT(*) FROM fts WHERE fts MATCH ?", (t,)).fetchone()[0])
            for t in terms
        }
        (total,) = self.db.execute("SELECT COUNT(*) FROM chunks").fetchone()
        return counts, int(total)

    def coverage(self, query: str, ids: Sequence[str]) -> dict[str, float]:
        """For each of ``ids``, the share of the query's distinct search terms the chunk holds
        (its path, names, text or context, as :meth:`search` matches them), each term weighed
        by its rarity in the index, log(1 + N / (n + 1)): 1 for a chunk that holds every word
        of the query, whatever the corpus it belongs to or its length."""
        import numpy as np

        wanted = list(dict.fromkeys(ids))
        out = dict.fromkeys(wanted, 0.0)
        terms = query_terms(query)
        if not terms or not wanted:
            return out
        rid_of: dict[int, str] = {}
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            marks = ",".join("?" * len(batch))
            for cid, rid in self.db.execute(f"SELECT id, rid FROM chunks WHERE id IN ({marks})", batch):
                rid_of[int(rid)] = str(cid)
        candidates = np.array(sorted(rid_of), dtype=np.int64)
        if self._remembered is not None:
            total = self._remembered.count()
            weights = ", ".join(str(w) for w in WEIGHTS)
            holders = self._remembered.holders(terms, weights, candidates)
        else:
            (total,) = self.db.execute("SELECT COUNT(*) FROM chunks").fetchone()
            holders = self._holders(terms, candidates)
        held = np.zeros(len(candidates))
        everything = 0.0
        for positions, count in holders:
            rarity = math.log(1 + int(total) / (count + 1))
            everything += rarity
            held[positions] += rarity
        if everything > 0:
            for rid, value in zip(candidates.tolist(), held.tolist(), strict=True):
                out[rid_of[rid]] = value / everything
        return out

    def _holders(self, terms: Sequence[str], candidates: Any) -> Iterator[tuple[Any, int]]:
        """:meth:`Remembered.holders`, read from FTS5 term by term."""
        import numpy as np

        for term in terms:
            rows = [r[0] for r in self.db.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (term,))]
            yield np.flatnonzero(np.isin(candidates, rows)), len(rows)

    def search_all(self, words: Sequence[str], limit: int) -> list[str]:
        """Chunk ids holding every one of ``words`` (search tokens), best BM25 first, ties by id."""
        terms = list(dict.fromkeys(w for w in words if w))[:MAX_QUERY_TERMS]
        if not terms or limit < 1:
            return []
        weights = ", ".join(str(w) for w in WEIGHTS)
        if self._remembered is not None:
            return [cid for cid, _ in self._remembered.search_all([f'"{t}"' for t in terms], weights, limit)]
        expression = " AND ".join(f'"{t}"' for t in terms)
        rows = self.db.execute(
            f"SELECT c.id, bm25(fts, {weights}) AS score FROM fts JOIN chunks c ON c.rid = fts.rowid "
            "WHERE fts MATCH ? ORDER BY score, c.id LIMIT ?",
            (expression, limit),
        ).fetchall()
        return [str(cid) for cid, _ in rows]

    def locations(self) -> list[tuple[str, str, int, int, tuple[str, ...], str]]:
        """(id, path, start, end, symbols, unit) of every chunk, by path and line."""
        return [
            (r[0], r[1], r[2], r[3], tuple(json.loads(r[4])), r[5])
            for r in self.db.execute(
                "SELECT id, path, start_line, end_line, symbols, unit FROM chunks "
                "ORDER BY path, start_line, id"
            )
        ]

    # -- writing (the caller commits) ---------------------------------------

    def replace_files(
        self,
        removed: Iterable[str],
        chunks: Sequence[Chunk],
        records: Sequence[FileRecord],
        columns: Sequence[tuple[str, str, str, str]] | None = None,
    ) -> None:
        """Drop every chunk of ``removed`` paths, then add ``chunks`` (``columns``: their
        :func:`indexed_columns`, when already read) and file ``records``."""
        self._forget()
        for path in removed:
            self.db.execute("DELETE FROM fts WHERE rowid IN (SELECT rid FROM chunks WHERE path = ?)", (path,))
            self.db.execute("DELETE FROM chunks WHERE path = ?", (path,))
            self.db.execute("DELETE FROM files WHERE path = ?", (path,))
        for at, chunk in enumerate(chunks):
            cursor = self.db.execute(
                f"INSERT INTO chunks ({COLUMNS}) VALUES ({','.join('?' * 14)})", _row(chunk)
            )
            self.db.execute(
                "INSERT INTO fts (rowid, path, symbols, body, context) VALUES (?, ?, ?, ?, ?)",
                (cursor.lastrowid, *(indexed_columns(chunk) if columns is None else columns[at])),
            )
        self.db.executemany(
            "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)",
            ((r.path, r.blob, r.date, r.secrets) for r in records),
        )

    def _forget(self) -> None:
        if self._remembered is not None:
            self._remembered = Remembered(self.db)

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def commit(self) -> None:
        self.db.commit()
