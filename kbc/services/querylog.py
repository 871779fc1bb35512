"""The query log of a knowledge base: every retrieve, ask, search and usage report written to
the store's gap log, judged a knowledge gap or not by everything that answered it, and told
to whoever listens (a server's metrics)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kbc.retrieval.results import Evidence, Slice
from kbc.store.gaps import Gap, GapLog

# The shipped model's relevance floor: a query whose best embedded unit is less similar than
# this found nothing relevant (measured on the development split: benchmarks/relevance_floor.py).
RELEVANCE_FLOOR = 0.34
# Team knowledge answers a query when its best lexical hit holds this share of the query's words.
KNOWLEDGE_COVERAGE = 0.6


@dataclass(frozen=True, slots=True)
class Logged:
    """A query written to the gap log: what a server's metrics count."""

    kind: str  # "retrieve", "ask", "search" or "usage" (a report_usage call)
    use_case: str
    gap: bool  # the query is now a gap: nothing passed the floor, or nothing helped
    found: Slice | None = None  # the slice, for a retrieve or an ask


Listener = Callable[[Logged], None]


def answered_by_knowledge(evidence: Evidence) -> bool:
    """Whether team knowledge answered a query: its best unit is past the relevance floor, or
    its best lexical hit holds most of the query's words."""
    return (
        evidence.knowledge_similarity >= RELEVANCE_FLOOR or evidence.knowledge_coverage >= KNOWLEDGE_COVERAGE
    )


def below_floor(evidence: Evidence, found: Slice | None = None) -> bool:
    """Whether a query found nothing relevant, judged by everything that answered it: team
    knowledge that answered it (and, for a slice, is in it) makes it no gap; else its confidence
    is below the floor (or, where no confidence was estimated, its best unit below the relevance
    floor, or no word matched)."""
    if answered_by_knowledge(evidence) and (found is None or any(i.kind == "knowledge" for i in found.items)):
        return False
    if evidence.confidence >= 0:
        return evidence.low_confidence
    if evidence.best_similarity > -1.0:
        return evidence.best_similarity < RELEVANCE_FLOOR
    return evidence.lexical_hits == 0


class QueryLog:
    """The gap log at ``path``, opened on first use and kept open until :meth:`close`, under a
    lock of its own (a log write never waits on a retrieval)."""

    def __init__(self, path: Path, retention_days: int) -> None:
        self._path = path
        self._retention_days = retention_days
        self._log: GapLog | None = None
        self._lock = threading.Lock()
        self._listeners: list[Listener] = []

    def listen(self, listener: Listener) -> None:
        """Call ``listener`` after every query logged."""
        self._listeners.append(listener)

    def _heard(self, logged: Logged) -> None:
        for listener in self._listeners:
            listener(logged)

    def _opened(self) -> GapLog:  # callers hold the lock
        if self._log is None:
            self._log = GapLog(self._path, self._retention_days)
        return self._log

    def record(
        self,
        kind: str,
        question: str,
        use_case: str,
        evidence: Evidence,
        *,
        gap: bool | None = None,
        found: Slice | None = None,
    ) -> str:
        """Log a query (``gap``: whether it is one; by default, as :func:`below_floor` judges
        ``evidence`` and ``found``), tell the listeners, and return its id."""
        gap = below_floor(evidence, found) if gap is None else gap
        with self._lock:
            query_id = self._opened().record(
                kind,
                question,
                use_case,
                evidence.scores,
                evidence.best_similarity,
                gap,
                confidence=evidence.confidence,
            )
        self._heard(Logged(kind, use_case, gap, found))
        return query_id

    def report_usage(self, query_id: str, helpful_ids: list[str]) -> bool:
        with self._lock:
            recorded = self._opened().report_usage(query_id, helpful_ids)
        if recorded:
            self._heard(Logged("usage", "", not helpful_ids))
        return recorded

    def gaps(self) -> list[Gap]:
        with self._lock:
            return self._opened().gaps()

    def close(self) -> None:
        with self._lock:
            if self._log is not None:
                self._log.close()
                self._log = None
