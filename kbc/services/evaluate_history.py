"""`kbc eval --history`: the repository's own history as questions (:mod:`kbc.eval.history`),
each qualifying commit's message asked of a store built at its parent. One clone (sharing the
repository's objects, in a temporary folder) is checked out at the parents in chronological
order and refreshed incrementally between them, so successive builds reuse the caches; the
user's work tree is never touched. Scored as a golden file is (:mod:`kbc.services.evaluate`)."""

from __future__ import annotations

import dataclasses
import math
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from kbc.analyzers.gitrepo import GitFailed, git
from kbc.domain.errors import KbcError, TargetError
from kbc.domain.progress import Say
from kbc.domain.settings import Settings
from kbc.eval.baseline import WholeFileBM25
from kbc.eval.history import MAX_FILES, MinedCommit, mine_commits, repository_root
from kbc.eval.metrics import Gold
from kbc.index.tokencount import TokenCounter
from kbc.retrieval.profiles import Profile, load_profiles
from kbc.services.components import CONFIGURED, Components
from kbc.services.evaluate import HISTORY_USE_CASE, EvalReport, QuestionResult, _ask
from kbc.services.refresh import refresh
from kbc.services.retrieve import open_retriever
from kbc.store.facts_store import FactsStore


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
