"""Retrieval quality against known answers: Recall@k, reciprocal rank, budget recall.

A question's answer is a set of gold paths, each optionally narrowed to line
ranges. A system's answer is a ranking of files (best first, each file once)
and the set of passages it packed into the budget.

- Recall@k: the fraction of gold paths among the first ``k`` distinct files.
- Reciprocal rank: ``1 / r`` for the rank ``r`` of the first gold file in the
  whole ranking, 0 when none is ranked; its mean is MRR.
- Budget recall: the fraction of gold paths the packed slice holds; a path with
  line ranges counts only when a packed passage of it overlaps one of them.
- HunkAll: 1 when the packed passages of each gold path, taken together, cover
  every line of each of its ranges, else 0 (a path without ranges asks nothing
  of it); undefined (None) for a question without any ranges.
- Tokens to gold: the smallest budget of :data:`BUDGETS` at which HunkAll holds,
  None when it never does.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

BUDGETS = tuple(range(1_000, 27_001, 1_000))  # the budgets tokens to gold tries, smallest first


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
    hunk_all: float | None = None  # at the use case's budget; None: the question has no ranges
    tokens_to_gold: int | None = None  # None: never within BUDGETS, or HunkAll undefined

    def as_data(self) -> dict[str, float | int | str | None]:
        return {
            "recall@5": round(self.recall_at_5, 4),
            "recall@10": round(self.recall_at_10, 4),
            "rr": round(self.reciprocal_rank, 4),
            "budget_recall": round(self.budget_recall, 4),
            "hunk_all@budget": self.hunk_all,
            "tokens_to_gold": _budget_data(self.tokens_to_gold, defined=self.hunk_all is not None),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Summary:
    """Scores averaged over ``questions`` questions (MRR is the mean reciprocal rank).

    HunkAll and tokens to gold are over the ``hunk_questions`` questions with line ranges:
    the mean HunkAll, the median tokens to gold (``math.inf`` when that is never) and how many
    never got there; None when no question has ranges.
    """

    questions: int
    recall_at_5: float
    recall_at_10: float
    mrr: float
    budget_recall: float
    hunk_questions: int = 0
    hunk_all: float | None = None
    tokens_to_gold_median: float | None = None
    tokens_to_gold_never: int = 0

    def as_data(self) -> dict[str, float | int | str | None]:
        median = self.tokens_to_gold_median
        return {
            "questions": self.questions,
            "recall@5": round(self.recall_at_5, 4),
            "recall@10": round(self.recall_at_10, 4),
            "mrr": round(self.mrr, 4),
            "budget_recall": round(self.budget_recall, 4),
            "hunk_questions": self.hunk_questions,
            "hunk_all@budget": None if self.hunk_all is None else round(self.hunk_all, 4),
            "tokens_to_gold_median": _budget_data(
                None if median is None or math.isinf(median) else round(median), defined=median is not None
            ),
            "tokens_to_gold_never": self.tokens_to_gold_never,
        }


def _budget_data(tokens: int | None, defined: bool) -> int | str | None:
    """A budget for JSON: the number, "never", or None when it was not computed."""
    if not defined:
        return None
    return "never" if tokens is None else tokens


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


def _covered(passages: Iterable[Passage], ranges: Sequence[tuple[int, int]]) -> bool:
    """Whether the passages together hold every line of every range."""
    spans: list[tuple[int, int]] = []  # the passages merged, adjacent ones joined
    for passage in sorted(passages, key=lambda p: (p.start, p.end)):
        if spans and passage.start <= spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], max(spans[-1][1], passage.end))
        else:
            spans.append((passage.start, passage.end))
    return all(any(first <= start and end <= last for first, last in spans) for start, end in ranges)


def hunk_all(packed: Iterable[Passage], gold: Gold) -> float | None:
    """1.0 when the packed passages cover every line of every gold range, else 0.0; None when the
    question has no ranges."""
    wanted = {path: gold.ranges[path] for path in gold.paths if gold.ranges.get(path)}
    if not wanted:
        return None
    by_path: dict[str, list[Passage]] = {}
    for passage in packed:
        by_path.setdefault(passage.path, []).append(passage)
    return float(all(_covered(by_path.get(path, []), ranges) for path, ranges in wanted.items()))


def tokens_to_gold(
    pack_at: Callable[[int], Iterable[Passage]], gold: Gold, budgets: Sequence[int] = BUDGETS
) -> int | None:
    """The smallest of ``budgets`` at whose packing (``pack_at(budget)``) HunkAll holds; None when
    it holds at none of them or the question has no ranges."""
    for budget in budgets:
        if hunk_all(pack_at(budget), gold) == 1.0:
            return budget
    return None


def score(
    files: Sequence[str], packed: Iterable[Passage], gold: Gold, pack_at: Callable[[int], Iterable[Passage]]
) -> Scores:
    """One question's scores; ``files`` is the ranking of distinct files, best first, ``packed``
    the slice at the use case's budget and ``pack_at`` the slice at any budget."""
    packed = list(packed)
    hunks = hunk_all(packed, gold)
    to_gold = tokens_to_gold(pack_at, gold) if hunks is not None else None
    return Scores(
        recall_at(files, gold, 5),
        recall_at(files, gold, 10),
        reciprocal_rank(files, gold),
        budget_recall(packed, gold),
        hunks,
        to_gold,
    )


def summarize(scores: Sequence[Scores]) -> Summary:
    if not scores:
        return Summary(questions=0, recall_at_5=0.0, recall_at_10=0.0, mrr=0.0, budget_recall=0.0)
    ranged = [s for s in scores if s.hunk_all is not None]
    budgets = [math.inf if s.tokens_to_gold is None else float(s.tokens_to_gold) for s in ranged]
    return Summary(
        questions=len(scores),
        recall_at_5=statistics.fmean(s.recall_at_5 for s in scores),
        recall_at_10=statistics.fmean(s.recall_at_10 for s in scores),
        mrr=statistics.fmean(s.reciprocal_rank for s in scores),
        budget_recall=statistics.fmean(s.budget_recall for s in scores),
        hunk_questions=len(ranged),
        hunk_all=statistics.fmean(s.hunk_all or 0.0 for s in ranged) if ranged else None,
        tokens_to_gold_median=statistics.median(budgets) if budgets else None,
        tokens_to_gold_never=budgets.count(math.inf),
    )
