"""What a long-lived reader of the lexical index keeps between searches: each query term's BM25
scores by row, and the chunks it has read."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from kbc.domain.models import Chunk

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
        self.ids: dict[int, str] = {}
        self.size = 0

    def postings_of(self, term: str, weights: str) -> tuple[Any, Any]:
        import numpy as np

        found = self.terms.pop(term, None)
        if found is None:
            rows = self.db.execute(
                f"SELECT rowid, bm25(fts, {weights}) FROM fts WHERE fts MATCH ?", (term,)
            ).fetchall()
            found = (
                np.array([r[0] for r in rows], dtype=np.int64),
                np.array([r[1] for r in rows], dtype=np.float64),
            )
            self.postings += len(rows)
            while self.terms and self.postings > REMEMBERED_POSTINGS:
                oldest = next(iter(self.terms))
                self.postings -= len(self.terms.pop(oldest)[0])
        self.terms[term] = found
        return found

    def search(self, terms: Sequence[str], weights: str, limit: int) -> list[tuple[str, float]]:
        import numpy as np

        if not self.ids:
            self.ids = {int(rid): str(cid) for rid, cid in self.db.execute("SELECT rid, id FROM chunks")}
            self.size = max(self.ids, default=0) + 1
        found = [self.postings_of(term, weights) for term in terms]
        rows = np.concatenate([f[0] for f in found])
        if not len(rows):
            return []
        # bincount adds in array order: each row's scores are summed in the query's term order.
        total = np.bincount(rows, weights=np.concatenate([f[1] for f in found]), minlength=self.size)
        hit = np.unique(rows)
        scores = total[hit]
        if len(hit) > limit:
            cut = np.partition(scores, limit - 1)[limit - 1]
            keep = scores <= cut  # every row tied at the cut: which of them stay is decided by id
            hit, scores = hit[keep], scores[keep]
        ranked = sorted(
            (float(score), self.ids[int(rid)])
            for rid, score in zip(hit.tolist(), scores.tolist(), strict=True)
        )[:limit]
        return [(cid, -value) for value, cid in ranked]

    def read(self, ids: Sequence[str], fetch: Any) -> dict[str, Chunk]:
        known = {cid: chunk for cid in ids if (chunk := self.chunks.get(cid)) is not None}
        missing = [cid for cid in ids if cid not in known]
        fetched: dict[str, Chunk] = fetch(missing) if missing else {}
        self.chunks.update(fetched)
        while len(self.chunks) > REMEMBERED_CHUNKS:  # the oldest first; this answer is whole
            self.chunks.pop(next(iter(self.chunks)))
        return {cid: chunk for cid in ids if (chunk := known.get(cid) or fetched.get(cid)) is not None}
