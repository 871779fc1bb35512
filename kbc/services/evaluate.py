"""`kbc eval`: measure retrieval against known answers, beside a BM25 whole-file baseline.

Two sources of questions:

- a golden file (:mod:`kbc.eval.golden`) evaluated against the store already
  built for the repository;
- the repository's own history (:mod:`kbc.eval.history`): each
  qualifying commit's message asked of a store built at its parent. One clone
  (sharing the repository's objects, in a temporary folder) is checked out at the
  parents in chronological order and refreshed incrementally between them, so
  successive builds reuse the caches; the user's work tree is never touched.

For every question both systems are scored the same way (:mod:`kbc.eval.metrics`):
kbc's ranked chunks reduced to distinct files and its packed slice at the use
case's default budget, and BM25 over whole files with the same budget filled by
whole files in rank order. For tokens to gold each system packs again at every
budget of :data:`~kbc.eval.metrics.BUDGETS` (kbc from its one search).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kbc.analyzers.gitrepo import GitFailed, git
from kbc.domain.errors import GoldenError, KbcError, TargetError
from kbc.domain.models import KNOWLEDGE_PREFIX, OUTSIDE_KINDS
from kbc.domain.progress import Say
from kbc.domain.settings import Settings
from kbc.eval.baseline import WholeFileBM25
from kbc.eval.golden import GoldenQuestion, read_golden
from kbc.eval.history import MAX_FILES, MinedCommit, mine_commits, repository_root
from kbc.eval.metrics import BUDGETS, Gold, Passage, Scores, Summary, distinct_files, score, summarize
from kbc.index.tokencount import TokenCounter
from kbc.retrieval.profiles import Profile, load_profiles
from kbc.retrieval.retrieve import Retriever
from kbc.services.components import CONFIGURED, Components
from kbc.services.refresh import refresh
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
        packed = retriever.slice_of(ranking, query, profile, budget)
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


def _git(tree: Path, *args: str) -> None:
    try:
        git(tree, *args)
    except GitFailed as exc:
        detail = exc.stderr.strip().splitlines()
        raise TargetError(
            f"git {args[0]} failed: {detail[-1] if detail else 'no reason given'}",
            hint="check that the repository is readable and git works",
        ) from None


def _clone(root: Path, tree: Path) -> None:
    """A clone borrowing ``root``'s objects, so any commit of it can be checked out."""
    try:
        git(None, "clone", "-q", "--no-checkout", "--shared", "--", str(root), str(tree))
    except GitFailed as exc:
        detail = exc.stderr.strip().splitlines()
        raise TargetError(
            f"cannot clone {root}: {detail[-1] if detail else 'no reason given'}",
            hint="check that the repository is readable",
        ) from None


def history_settings(settings: Settings) -> Settings:
    """Settings for the history's builds: always incremental (the caches carry over between
    parents), never refreshing on their own."""
    return dataclasses.replace(
        settings, full_rebuild_fraction=math.inf, full_rebuild_files=sys.maxsize, auto_refresh=False, store=""
    )


def evaluate_history(
    path: Path,
    count: int,
    settings: Settings,
    *,
    max_files: int = MAX_FILES,
    progress: Say | None = None,
    components: Components = CONFIGURED,
) -> EvalReport:
    """The newest ``count`` qualifying commits of the repository at ``path``, each asked of a
    store built at its parent, in the implementation use case."""
    started = time.perf_counter()
    if count < 1:
        raise KbcError(f"--history {count}: ask for at least one commit")
    root = repository_root(path)
    mined = mine_commits(root, count, max_files)
    if not mined.commits:
        skipped = ", ".join(f"{reason} {n}" for reason, n in mined.reasons.items())
        raise KbcError(
            f"no qualifying commit among the {mined.scanned} commits of {root}"
            + (f" (skipped: {skipped})" if skipped else ""),
            hint="commits that change existing source files are needed; see docs/eval.md",
        )
    profile = load_profiles(root).get(HISTORY_USE_CASE)
    if profile is None:
        raise KbcError(f"no use case named {HISTORY_USE_CASE!r}")
    ordered = sorted(mined.commits, key=lambda c: (c.parent_time, c.sha))
    chosen = history_settings(settings)
    counter = components.token_counter()
    results: list[QuestionResult] = []
    paths: Counter[str] = Counter()
    modes: set[str] = set()
    unindexed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="kbc-eval-", ignore_cleanup_errors=True) as work:
        tree, store = Path(work) / root.name, Path(work) / "store"
        _clone(root, tree)
        for number, commit in enumerate(ordered, start=1):
            result, refresh_path, mode = _history_question(
                tree, store, chosen, profile, counter, commit, components
            )
            paths[refresh_path] += 1
            modes.add(mode)
            if result is None:
                unindexed.append(commit.sha)
            else:
                results.append(result)
            if progress is not None:
                line = f"[{number}/{len(ordered)}] {commit.sha[:10]} ({refresh_path})"
                if result is not None:
                    line += (
                        f" kbc R@10 {result.scores['kbc'].recall_at_10:.2f}, "
                        f"bm25 R@10 {result.scores['bm25'].recall_at_10:.2f}"
                    )
                progress(f"{line}: {commit.subject[:60]}")
    history = {
        "repository": str(root),
        "asked": count,
        "commits": len(results),
        "scanned": mined.scanned,
        "skipped": mined.reasons,
        "max_files": max_files,
        "refresh": dict(sorted(paths.items())),
        "not_indexed": unindexed,
    }
    return EvalReport(
        "history", str(root), ", ".join(sorted(modes)), tuple(results), time.perf_counter() - started, history
    )


@dataclass(frozen=True, slots=True)
class ParentBuild:
    """A commit's parent checked out and its store refreshed: what the commit's question needs."""

    refresh_mode: str
    tracked: set[str]  # the files indexed at the parent
    gold: Gold | None  # the commit's changed files indexed at the parent; None when none is


def build_at_parent(
    tree: Path, store: Path, settings: Settings, commit: MinedCommit, components: Components = CONFIGURED
) -> ParentBuild:
    """Check out ``commit``'s parent in ``tree`` and refresh ``store`` from it."""
    _git(tree, "checkout", "-q", "-f", "--detach", commit.parent)
    _git(tree, "clean", "-q", "-f", "-d", "-x")
    refreshed = refresh(str(tree), settings, store, no_llm=True, components=components)
    tracked = {f.path for f in FactsStore(store).inventory().files}
    answer = tuple(p for p in commit.answer if p in tracked)
    # no gold when the changed files were skipped at the parent (binary, oversized, excluded)
    gold = (
        Gold(answer, {path: ranges for path, ranges in commit.lines().items() if path in answer})
        if answer
        else None
    )
    return ParentBuild(refreshed.mode, tracked, gold)


def _history_question(
    tree: Path,
    store: Path,
    settings: Settings,
    profile: Profile,
    counter: TokenCounter,
    commit: MinedCommit,
    components: Components,
) -> tuple[QuestionResult | None, str, str]:
    built = build_at_parent(tree, store, settings, commit, components)
    gold, tracked = built.gold, built.tracked
    retriever = open_retriever(tree, settings, store, components)
    try:
        mode = retriever.mode
        if gold is None:
            return None, built.refresh_mode, mode
        with WholeFileBM25(tree, tracked) as baseline:
            top, scores = _ask(retriever, baseline, counter, profile, commit.query, gold)
    finally:
        retriever.close()
    label = f"{commit.sha[:10]} {commit.subject}"
    return (
        QuestionResult(
            label=label,
            question=commit.query,
            use_case=profile.name,
            gold=gold.paths,
            top=top,
            scores=scores,
            lines=gold.ranges,
        ),
        built.refresh_mode,
        mode,
    )


# -- rendering ------------------------------------------------------------------


def render_report(report: EvalReport, misses: int = 10) -> str:
    """The report as a table, with the questions kbc missed in its top ten."""
    if report.mode == "golden":
        head = f"kbc eval: {len(report.results)} questions from {report.source}"
    else:
        history = report.history
        skipped = ", ".join(f"{reason} {n}" for reason, n in history.get("skipped", {}).items())
        head = (
            f"kbc eval: the last {len(report.results)} qualifying commits of {report.source} "
            f"({history.get('scanned', 0)} scanned" + (f"; skipped {skipped}" if skipped else "") + ")"
        )
    lines = [head, f"retrieval: {report.retrieval or 'none'} · {report.seconds:.1f} s"]
    if report.mode == "history":
        refreshes = ", ".join(f"{n} {p}" for p, n in report.history.get("refresh", {}).items())
        lines.append(f"stores built at each commit's parent: {refreshes}")
    lines.append("")
    header = (
        "use case",
        "system",
        "questions",
        "Recall@5",
        "Recall@10",
        "MRR",
        "Budget recall",
        "HunkAll@budget",
        "To gold (median)",
    )
    rows: list[tuple[str, ...]] = [header]
    cases = list(report.summaries("kbc"))
    for case in cases:
        for system in SYSTEMS:
            s = report.summaries(system)[case]
            rows.append(
                (
                    case,
                    TITLES[system],
                    str(s.questions),
                    f"{s.recall_at_5:.3f}",
                    f"{s.recall_at_10:.3f}",
                    f"{s.mrr:.3f}",
                    f"{s.budget_recall:.3f}",
                    *_line_cells(s),
                )
            )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for index, row in enumerate(rows):
        cells = [cell.ljust(widths[i]) if i < 2 else cell.rjust(widths[i]) for i, cell in enumerate(row)]
        lines.append("  ".join(cells).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    if report.summaries("kbc")["overall"].hunk_questions:
        lines += [
            "",
            f"HunkAll@budget and to gold: over the questions with line ranges (how many, in "
            f"brackets, when not all); budgets tried: {BUDGETS[0]:,} to {BUDGETS[-1]:,} tokens.",
        ]
    missed = [r for r in report.results if r.scores["kbc"].recall_at_10 < 1.0]
    if missed and misses > 0:
        lines += [
            "",
            f"gold files kbc did not rank in its top 10 ({len(missed)} "
            f"question{'s' if len(missed) != 1 else ''}):",
        ]
        for result in missed[:misses]:
            wanted = ", ".join(p for p in result.gold if p not in result.top["kbc"])
            got = ", ".join(result.top["kbc"][:3]) or "nothing"
            lines.append(f"  {result.label[:80]}: wanted {wanted}; ranked first {got}")
        if len(missed) > misses:
            lines.append(f"  … and {len(missed) - misses} more (--format json lists every question)")
    return "\n".join(lines) + "\n"


def _line_cells(summary: Summary) -> tuple[str, str]:
    """The HunkAll and tokens-to-gold cells: "-" when no question has line ranges."""
    if summary.hunk_all is None or summary.tokens_to_gold_median is None:
        return "-", "-"
    hunks = f"{summary.hunk_all:.3f}"
    if summary.hunk_questions != summary.questions:
        hunks += f" ({summary.hunk_questions})"
    median = summary.tokens_to_gold_median
    to_gold = "never" if math.isinf(median) else f"{median:,.0f}"
    if summary.tokens_to_gold_never:
        to_gold += f" ({summary.tokens_to_gold_never} never)"
    return hunks, to_gold
