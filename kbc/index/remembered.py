"""What a long-lived reader of the lexical index keeps between searches: each query term's BM25
scores by row, and the chunks it has read."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from kbc.domain.models import Chunk
from kbc.index.topk import top_rows

REMEMBERED_POSTINGS = 2_000_000  # (row, score) pairs a long-lived reader keeps, over all its terms
REMEMBERED_CHUNKS = 20_000  # chunks a long-lived reader keeps


class Remembered:
    """What a long-lived reader of one pinned index keeps between searches.

    FTS5's BM25 of an OR query is, row by row, the sum over the query's phrases of each
    phrase's own BM25 (its IDF, its weighted frequency in the row, the row's length), added in
    the query's order. So each term's scores by row are read once, with a query of that term
    alone, and a search adds them up in the same order: the same scores to the last bit as
    the OR query, whose cost grows with rows times terms (a long issue text has hundreds).
    """

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.terms: dict[str, tuple[Any, Any]] = {}  # phrase -> (rowids, scores), least recent first
        self.postings = 0
        self.chunks: dict[str, Chunk] = {}
        self.ids: dict[int, str] = {}  # rowid -> chunk id, every chunk's (read on first need)
        self.size = 0  # past the largest rowid
        self.by_id: Any = None

    def postings_of(self, term: str, weights: str) -> tuple[Any, Any]:
        """The rows holding ``term`` (ascending) and its BM25 score in each."""
        import numpy as np

        found = self.terms.pop(term, None)
        if found is None:
            rows = self.db.execute(
                f"SELECT rowid, bm25(fts, {weights}) FROM fts WHERE fts MATCH ?", (term,)
            ).fetchall()
            read = np.fromiter(itertools.chain.from_iterable(rows), np.float64, 2 * len(rows)).reshape(-1, 2)
            found = (read[:, 0].astype(np.int64), read[:, 1].copy())  # rowids are far below 2**53
            if len(found[0]) > 1 and not bool(np.all(found[0][1:] > found[0][:-1])):
                order = np.argsort(found[0])
                found = (found[0][order], found[1][order])
            self.postings += len(found[0])
            while self.terms and self.postings > REMEMBERED_POSTINGS:
                oldest = next(iter(self.terms))
                self.postings -= len(self.terms.pop(oldest)[0])
        self.terms[term] = found
        return found

    def count(self) -> int:
        """How many chunks the index holds."""
        self._read_ids()
        return len(self.ids)

    def _read_ids(self) -> None:
        import numpy as np

        if not self.ids:
            self.ids = {int(rid): str(cid) for rid, cid in self.db.execute("SELECT rid, id FROM chunks")}
            self.size = max(self.ids, default=0) + 1
            self.by_id = np.zeros(self.size, dtype=np.int64)  # each row's place in the order of ids
            self.by_id[sorted(self.ids, key=self.ids.__getitem__)] = np.arange(len(self.ids))

    def search(self, terms: Sequence[str], weights: str, limit: int) -> list[tuple[str, float]]:
        self._read_ids()
        hit, scores = top_rows([self.postings_of(term, weights) for term in terms], self.size, limit)
        return self._ranked(hit, scores, limit)

    def search_all(self, terms: Sequence[str], weights: str, limit: int) -> list[tuple[str, float]]:
        """The rows holding every one of ``terms``, best first, ties by id: FTS5's AND query
        scores a row as its OR query does (the same terms, each with its own score)."""
        import numpy as np

        self._read_ids()
        found = [self.postings_of(term, weights) for term in terms]
        hit = found[0][0]
        for rows, _ in found[1:]:
            hit = np.intersect1d(hit, rows, assume_unique=True)
        scores = np.zeros(len(hit))
        for rows, values in found:  # in the query's order, as FTS5 adds them
            scores += values[np.searchsorted(rows, hit)]
        return self._ranked(hit, scores, limit)

    def _ranked(self, hit: Any, scores: Any, limit: int) -> list[tuple[str, float]]:
        """(chunk id, score: higher is better) of rows ``hit``, by score then id, the first ``limit``."""
        import numpy as np

        order = np.lexsort((self.by_id[hit], scores))[:limit]
        return [
            (self.ids[rid], -score)
            for rid, score in zip(hit[order].tolist(), scores[order].tolist(), strict=True)
        ]

    def holders(self, terms: Sequence[str], weights: str, candidates: Any) -> Iterator[tuple[Any, int]]:
        """For each of ``terms``, which of ``candidates`` (distinct rowids of the index) hold it,
        as positions in ``candidates``, and how many rows hold it."""
        import numpy as np

        self._read_ids()
        at = np.full(self.size, -1, dtype=np.int64)
        at[candidates] = np.arange(len(candidates))
        for term in terms:
            rows = self.postings_of(term, weights)[0]
            found = at[rows]
            yield found[found >= 0], len(rows)

    def read(self, ids: Sequence[str], fetch: Any) -> dict[str, Chunk]:
        known = {cid: chunk for cid in ids if (chunk := self.chunks.get(cid)) is not None}
        missing = [cid for cid in ids if cid not in known]
        fetched: dict[str, Chunk] = fetch(missing) if missing else {}
        self.chunks.update(fetched)
        while len(self.chunks) > REMEMBERED_CHUNKS:  # the oldest first; this answer is whole
            self.chunks.pop(next(iter(self.chunks)))
        return {cid: chunk for cid in ids if (chunk := known.get(cid) or fetched.get(cid)) is not None}
