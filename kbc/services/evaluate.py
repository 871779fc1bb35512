"""`kbc eval`: measure retrieval against known answers, beside a BM25 whole-file baseline.

Two sources of questions:

- a golden file (:mod:`kbc.eval.golden`) evaluated against the store already
  built for the repository;
- the repository's own history: each qualifying commit's message asked of a store
  built at its parent (:mod:`kbc.services.evaluate_history`).

For every question both systems are scored the same way (:mod:`kbc.eval.metrics`):
kbc's ranked chunks reduced to distinct files and its packed slice at the use
case's default budget, and BM25 over whole files with the same budget filled by
whole files in rank order. For tokens to gold each system packs again at every
budget of :data:`~kbc.eval.metrics.BUDGETS` (kbc from its one search).
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kbc.domain.errors import GoldenError, KbcError
from kbc.domain.models import KNOWLEDGE_PREFIX, OUTSIDE_KINDS
from kbc.domain.settings import Settings
from kbc.eval.baseline import WholeFileBM25
from kbc.eval.golden import GoldenQuestion, read_golden
from kbc.eval.metrics import Gold, Passage, Scores, Summary, distinct_files, score, summarize
from kbc.index.tokencount import TokenCounter
from kbc.retrieval.profiles import Profile, load_profiles
from kbc.retrieval.retrieve import Retriever
from kbc.services.components import CONFIGURED, Components
from kbc.services.retrieve import open_retriever
from kbc.store.facts_store import FactsStore
from kbc.store.layout import store_path

SYSTEMS = ("kbc", "bm25")
TITLES = {"kbc": "kbc", "bm25": "BM25 whole files"}
HISTORY_USE_CASE = "implementation"
TOP = 10  # files kept per question in the report


@dataclass(frozen=True, slots=True, kw_only=True)
class QuestionResult:
    label: str  # the golden question's label, or the commit's short sha and subject
    question: str
    use_case: str
    gold: tuple[str, ...]
    top: dict[str, tuple[str, ...]]  # system -> its best files
    scores: dict[str, Scores]  # system -> scores
    lines: Mapping[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)  # gold path -> ranges

    def as_data(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "question": self.question,
            "use_case": self.use_case,
            "gold": list(self.gold),
            "gold_lines": {path: [list(r) for r in ranges] for path, ranges in self.lines.items()},
            **{
                system: {**self.scores[system].as_data(), "top": list(self.top[system])} for system in SYSTEMS
            },
        }


@dataclass(frozen=True, slots=True)
class EvalReport:
    mode: str  # "golden" | "history"
    source: str  # the golden file, or the repository whose history was mined
    retrieval: str  # "lexical", "hybrid" (or both, comma-separated, when it changed)
    results: tuple[QuestionResult, ...]
    seconds: float = 0.0
    history: dict[str, Any] = field(default_factory=dict)  # scanned, skipped by reason, refresh paths

    def summaries(self, system: str) -> dict[str, Summary]:
        """Scores by use case, then ``overall``."""
        by_case: dict[str, list[Scores]] = {}
        for result in self.results:
            by_case.setdefault(result.use_case, []).append(result.scores[system])
        out = {case: summarize(scores) for case, scores in sorted(by_case.items())}
        out["overall"] = summarize([r.scores[system] for r in self.results])
        return out

    def as_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "mode": self.mode,
            "source": self.source,
            "retrieval": self.retrieval,
            "questions": len(self.results),
            "seconds": round(self.seconds, 2),
            "systems": {
                system: {case: s.as_data() for case, s in self.summaries(system).items()}
                for system in SYSTEMS
            },
            "results": [r.as_data() for r in self.results],
        }
        if self.history:
            data["history"] = self.history
        return data


# -- one question ---------------------------------------------------------------


def _ask(
    retriever: Retriever,
    baseline: WholeFileBM25,
    counter: TokenCounter,
    profile: Profile,
    query: str,
    gold: Gold,
) -> tuple[dict[str, tuple[str, ...]], dict[str, Scores]]:
    """Both systems' best files and scores; each searches once and packs at every budget asked."""
    ranking = retriever.search(query, profile)
    # what is not the repository's code is left out, but team knowledge a question is about
    outside = (
        OUTSIDE_KINDS - {"knowledge"}
        if any(p.startswith(KNOWLEDGE_PREFIX) for p in gold.paths)
        else OUTSIDE_KINDS
    )
    files = distinct_files(
        ranking.chunks[cid].path for cid, _ in ranking.ranked if ranking.chunks[cid].kind not in outside
    )

    @functools.cache
    def kbc_at(budget: int) -> tuple[Passage, ...]:
        # the ranking's slice, whatever its confidence: the floor is a decision measured apart
        packed = retriever.slice_of(ranking, query, profile, budget, min_confidence=0.0)
        return tuple(Passage(i.path, i.start_line, i.end_line) for i in packed.items if i.kind not in outside)

    ranked = baseline.rank(query)

    def bm25_at(budget: int) -> tuple[Passage, ...]:
        return tuple(Passage(path, 1, sys.maxsize) for path in baseline.fill(ranked, budget, counter))

    return (
        {"kbc": tuple(files[:TOP]), "bm25": tuple(ranked[:TOP])},
        {
            "kbc": score(files, kbc_at(profile.budget), gold, kbc_at),
            "bm25": score(ranked, bm25_at(profile.budget), gold, bm25_at),
        },
    )


# -- golden files ---------------------------------------------------------------


def _symbol_spans(store: FactsStore) -> dict[str, tuple[str, int, int]]:
    spans: dict[str, tuple[str, int, int]] = {}
    for facts in store.facts():
        for symbol in facts.symbols:
            spans.setdefault(symbol.qname, (facts.path, symbol.start_line, symbol.end_line))
    return spans


def gold_of(
    question: GoldenQuestion, tracked: set[str], spans: dict[str, tuple[str, int, int]], problems: list[str]
) -> Gold:
    """The question's answer checked against the repository; problems are appended."""
    for path in question.paths:
        if path not in tracked:
            problems.append(f"{question.label}: {path} is not a tracked text file of the repository")
    ranges = {path: list(found) for path, found in question.lines.items()}
    for name in question.symbols:
        span = spans.get(name)
        if span is None:
            problems.append(
                f"{question.label}: no symbol {name!r} in the repository's facts "
                "(give a qualified name, e.g. pkg.module.function)"
            )
        elif span[0] not in question.paths:
            problems.append(
                f"{question.label}: symbol {name!r} is defined in {span[0]}, which is not one of its `paths`"
            )
        else:
            ranges.setdefault(span[0], []).append((span[1], span[2]))
    return Gold(question.paths, {path: tuple(sorted(set(r))) for path, r in sorted(ranges.items())})


def select(
    questions: Sequence[GoldenQuestion],
    use_cases: Sequence[str],
    profiles: Mapping[str, Profile],
    source: str,
) -> list[GoldenQuestion]:
    """The questions of the chosen use cases; unknown use cases are errors."""
    unknown = sorted(set(use_cases) - set(profiles))
    if unknown:
        raise KbcError(
            f"no use case named {', '.join(repr(u) for u in unknown)}",
            hint=f"use one of: {', '.join(sorted(profiles))}",
        )
    problems = [
        f"{q.label}: no use case named {q.use_case!r} (use one of: {', '.join(sorted(profiles))})"
        for q in questions
        if q.use_case not in profiles
    ]
    if problems:
        raise GoldenError(source, problems)
    chosen = [q for q in questions if not use_cases or q.use_case in use_cases]
    if not chosen:
        present = sorted({q.use_case for q in questions})
        raise KbcError(
            f"{source} has no questions for the use case{'s' if len(use_cases) > 1 else ''} "
            f"{', '.join(use_cases)}",
            hint=f"its questions are for: {', '.join(present)}",
        )
    return chosen


def evaluate_golden(
    root: Path,
    settings: Settings,
    golden: Path,
    store_dir: Path | None = None,
    use_cases: Sequence[str] = (),
    components: Components = CONFIGURED,
    profiles: Mapping[str, Profile] | None = None,
) -> EvalReport:
    """Every question of ``golden`` asked of the store built for ``root``, in the use cases'
    profiles (``profiles``, else the repository's: an ablation passes its variants)."""
    started = time.perf_counter()
    profiles = load_profiles(root) if profiles is None else profiles
    questions = select(read_golden(golden), use_cases, profiles, str(golden))
    retriever = open_retriever(root, settings, store_dir, components)
    retriever.lexical.remember()  # every question is asked of the same build
    try:
        store = FactsStore(store_path(root, settings, store_dir))
        tracked = {f.path for f in store.inventory().files}
        documents = {p for p in retriever.lexical.files() if p.startswith(KNOWLEDGE_PREFIX)}
        spans = _symbol_spans(store)
        problems: list[str] = []
        # an answer may be a team-knowledge document the build indexed (@knowledge/<root>/<path>)
        golds = [gold_of(q, tracked | documents, spans, problems) for q in questions]
        if problems:
            raise GoldenError(
                str(golden),
                problems,
                hint="fix the golden file, or rebuild the store if the repository moved (`kbc refresh`)",
            )
        counter = components.token_counter()
        results = []
        with WholeFileBM25(root, tracked) as baseline:
            for question, gold in zip(questions, golds, strict=True):
                top, scores = _ask(
                    retriever, baseline, counter, profiles[question.use_case], question.question, gold
                )
                results.append(
                    QuestionResult(
                        label=question.label,
                        question=question.question,
                        use_case=question.use_case,
                        gold=gold.paths,
                        top=top,
                        scores=scores,
                        lines=gold.ranges,
                    )
                )
        mode = retriever.mode
    finally:
        retriever.close()
    return EvalReport("golden", str(golden), mode, tuple(results), time.perf_counter() - started)


# -- history --------------------------------------------------------------------
