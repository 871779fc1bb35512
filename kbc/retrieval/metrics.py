"""Retrieval quality against known answers: Recall@k, reciprocal rank, budget recall.

A question's answer is a set of gold paths, each optionally narrowed to line
ranges. A system's answer is a ranking of files (best first, each file once)
and the set of passages it packed into the budget.

- Recall@k: the fraction of gold paths among the first ``k`` distinct files.
- Reciprocal rank: ``1 / r`` for the rank ``r`` of the first gold file in the
  whole ranking, 0 when none is ranked; its mean is MRR.
- Budget recall: the fraction of gold paths the packed slice holds; a path with
  line ranges counts only when a packed passage of it overlaps one of them.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

KS = (5, 10)


@dataclass(frozen=True, slots=True)
class Gold:
    """What answers a question: paths, some narrowed to 1-based inclusive line ranges."""

    paths: tuple[str, ...]
    ranges: Mapping[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Passage:
    """A packed item: lines ``start``..``end`` (inclusive) of ``path``."""

    path: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Scores:
    recall_at_5: float
    recall_at_10: float
    reciprocal_rank: float
    budget_recall: float

    def as_data(self) -> dict[str, float]:
        return {"recall@5": round(self.recall_at_5, 4), "recall@10": round(self.recall_at_10, 4),
                "rr": round(self.reciprocal_rank, 4), "budget_recall": round(self.budget_recall, 4)}


@dataclass(frozen=True, slots=True)
class Summary:
    """Scores averaged over ``questions`` questions (MRR is the mean reciprocal rank)."""

    questions: int
    recall_at_5: float
    recall_at_10: float
    mrr: float
    budget_recall: float

    def as_data(self) -> dict[str, float | int]:
        return {"questions": self.questions, "recall@5": round(self.recall_at_5, 4),
                "recall@10": round(self.recall_at_10, 4), "mrr": round(self.mrr, 4),
                "budget_recall": round(self.budget_recall, 4)}


def distinct_files(paths: Iterable[str]) -> list[str]:
    """Each path once, at its first position."""
    seen: dict[str, None] = {}
    for path in paths:
        seen.setdefault(path, None)
    return list(seen)


def recall_at(files: Sequence[str], gold: Gold, k: int) -> float:
    if not gold.paths:
        return 0.0
    top = set(files[:k])
    return sum(1 for path in gold.paths if path in top) / len(gold.paths)


def reciprocal_rank(files: Sequence[str], gold: Gold) -> float:
    wanted = set(gold.paths)
    for rank, path in enumerate(files, start=1):
        if path in wanted:
            return 1.0 / rank
    return 0.0


def _overlaps(passage: Passage, ranges: Sequence[tuple[int, int]]) -> bool:
    return any(passage.start <= end and passage.end >= start for start, end in ranges)


def budget_recall(packed: Iterable[Passage], gold: Gold) -> float:
    if not gold.paths:
        return 0.0
    by_path: dict[str, list[Passage]] = {}
    for passage in packed:
        by_path.setdefault(passage.path, []).append(passage)
    found = 0
    for path in gold.paths:
        passages = by_path.get(path, [])
        ranges = gold.ranges.get(path, ())
        if passages and (not ranges or any(_overlaps(p, ranges) for p in passages)):
            found += 1
    return found / len(gold.paths)


def score(files: Sequence[str], packed: Iterable[Passage], gold: Gold) -> Scores:
    """One question's scores; ``files`` is the ranking of distinct files, best first."""
    return Scores(recall_at(files, gold, 5), recall_at(files, gold, 10), reciprocal_rank(files, gold),
                  budget_recall(packed, gold))


def summarize(scores: Sequence[Scores]) -> Summary:
    if not scores:
        return Summary(0, 0.0, 0.0, 0.0, 0.0)
    return Summary(len(scores), statistics.fmean(s.recall_at_5 for s in scores),
                   statistics.fmean(s.recall_at_10 for s in scores),
                   statistics.fmean(s.reciprocal_rank for s in scores),
                   statistics.fmean(s.budget_recall for s in scores))
