"""The knowledge-gap log: every retrieve and ask, and what callers said helped.

A query is a gap only on evidence: its slice's confidence was below the floor (or,
where no confidence was estimated, nothing it found passed the relevance floor),
or a caller reported (``report_usage``) that none of its results helped.
Entries older than the retention are pruned whenever the log is written.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kbc.store.files import connect

SCHEMA = """
CREATE TABLE IF NOT EXISTS queries (
    id TEXT PRIMARY KEY, at REAL, kind TEXT, question TEXT, use_case TEXT, results INTEGER,
    best REAL, median REAL, margin REAL, similarity REAL, below_floor INTEGER);
CREATE TABLE IF NOT EXISTS usage (query_id TEXT, at REAL, helpful TEXT);
CREATE INDEX IF NOT EXISTS queries_at ON queries (at);
"""


@dataclass(frozen=True, slots=True)
class Gap:
    question: str  # as last asked
    count: int  # times it was a gap
    asked: int  # times it was asked at all
    last: str  # ISO date of the last time it was a gap
    reasons: tuple[str, ...]  # "low confidence", "below the relevance floor", "reported unhelpful"


QUESTION_CHARS = 2_000  # of a question kept in the log: a pasted log file is not a question


def _normal(question: str) -> str:
    return re.sub(r"\s+", " ", question.strip().lower())


PRUNE_EVERY = 60.0  # seconds between two prunings by one open log


class GapLog:
    """The log of one store. One instance may stay open for many queries (a server's); its
    callers serialise the calls. Several processes may write the same log at once."""

    def __init__(self, path: Path, retention_days: int = 90) -> None:
        self._db = connect(path, shared=True, timeout=30)
        # A query log: losing the last entries to a power cut is acceptable, a sync per query is not.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(queries)")}
        if "confidence" not in columns:  # a log written before confidences were estimated
            with self._db:
                self._db.execute("ALTER TABLE queries ADD COLUMN confidence REAL DEFAULT -1")
        self.retention = retention_days * 86400.0
        self._pruned = float("-inf")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> GapLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def record(
        self,
        kind: str,
        question: str,
        use_case: str,
        scores: Sequence[float],
        similarity: float,
        below_floor: bool,
        now: float | None = None,
        confidence: float = -1.0,
    ) -> str:
        """Log one query (its first ``QUESTION_CHARS`` characters); returns its id (what
        ``report_usage`` names)."""
        at = time.time() if now is None else now
        if len(question) > QUESTION_CHARS:
            question = question[:QUESTION_CHARS] + "…"
        query_id = hashlib.sha256(f"{time.time_ns()}\0{kind}\0{question}".encode()).hexdigest()[:16]
        top = sorted(scores, reverse=True)[:10]
        best = top[0] if top else 0.0
        median = sorted(top)[len(top) // 2] if top else 0.0
        with self._db:
            self._db.execute(
                "INSERT INTO queries (id, at, kind, question, use_case, results, best, median, "
                "margin, similarity, below_floor, confidence) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    query_id,
                    at,
                    kind,
                    question,
                    use_case,
                    len(scores),
                    best,
                    median,
                    best - median,
                    similarity,
                    int(below_floor),
                    confidence,
                ),
            )
            if at - self._pruned >= PRUNE_EVERY:
                self._prune(at)
        return query_id

    def report_usage(self, query_id: str, helpful_ids: Sequence[str], now: float | None = None) -> bool:
        """Record which results helped; False when the query is unknown (or pruned)."""
        known = self._db.execute("SELECT 1 FROM queries WHERE id = ?", (query_id,)).fetchone()
        if known is None:
            return False
        with self._db:
            self._db.execute(
                "INSERT INTO usage VALUES (?,?,?)",
                (query_id, time.time() if now is None else now, json.dumps(sorted(set(helpful_ids)))),
            )
        return True

    def _prune(self, now: float) -> None:
        self._pruned = now
        cutoff = now - self.retention
        self._db.execute(
            "DELETE FROM usage WHERE query_id IN (SELECT id FROM queries WHERE at < ?)", (cutoff,)
        )
        self._db.execute("DELETE FROM queries WHERE at < ?", (cutoff,))

    def gaps(self, now: float | None = None) -> list[Gap]:
        """Questions that were gaps, most frequent first."""
        with self._db:
            self._prune(time.time() if now is None else now)
        unhelpful = {row[0] for row in self._db.execute("SELECT query_id FROM usage WHERE helpful = '[]'")}
        helped = {row[0] for row in self._db.execute("SELECT query_id FROM usage WHERE helpful != '[]'")}
        groups: dict[str, _Group] = {}
        rows = self._db.execute(
            "SELECT id, at, question, below_floor, confidence FROM queries ORDER BY at, id"
        )
        for query_id, at, question, below, confidence in rows:
            group = groups.setdefault(_normal(question), _Group(question))
            group.asked += 1
            reasons = set()
            if below and query_id not in helped:
                reasons.add(
                    "low confidence"
                    if confidence is not None and confidence >= 0
                    else "below the relevance floor"
                )
            if query_id in unhelpful:
                reasons.add("reported unhelpful")
            if reasons:
                group.count += 1
                group.last = at
                group.question = question
                group.reasons |= reasons
        found = [
            Gap(
                g.question,
                g.count,
                g.asked,
                time.strftime("%Y-%m-%d", time.gmtime(g.last)),
                tuple(sorted(g.reasons)),
            )
            for g in groups.values()
            if g.count
        ]
        return sorted(found, key=lambda g: (-g.count, g.question))


@dataclass(slots=True)
class _Group:
    question: str
    count: int = 0
    asked: int = 0
    last: float = 0.0
    reasons: set[str] = field(default_factory=set)
