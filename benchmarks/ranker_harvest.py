"""The questions ``benchmarks/fit_ranker.py`` fits on: each repository's commits asked of a
store built before them (:func:`harvest_repository`), issue reports of the training sets
(:func:`harvest_issues`), questions asked of another repository (:func:`harvest_foreign`),
and the rows harvested before a feature was added, completed (:func:`augment`). Each
question's rows of features go to ``WORK/<owner+name>/rows-<mode>.jsonl``, and are read back
as the fits' matrices (:func:`load_questions`, :func:`matrices`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from timing import clock

WINDOW = 10  # commits asked of one build (at the parent of the first)


def load_questions(work: Path, mode: str) -> list[dict[str, Any]]:
    questions = []
    for path in sorted(work.glob(f"*/rows-{mode}.jsonl")):
        questions.extend(json.loads(line) for line in path.read_text().splitlines() if line)
    return questions


def all_questions(work: Path, mode: str) -> list[dict[str, Any]]:
    """The commits' questions and the issue reports' (marked ``issue``)."""
    issues = [{**q, "issue": True} for q in load_questions(work, f"issues-{mode}")]
    return load_questions(work, mode) + issues


def matrices(
    questions: list[dict[str, Any]], part: str, issue_weight: float = 1.0
) -> tuple[Any, Any, Any, Any]:
    """Features, labels, weights (each question's rows sum to 1, an issue report's to
    ``issue_weight``) and question index."""
    import numpy as np

    rows, labels, weights, owner = [], [], [], []
    for index, question in enumerate(questions):
        found = question[part]
        if not found or not any(item[1] for item in found):
            continue
        share = issue_weight if question.get("issue") else 1.0
        for item in found:
            rows.append(item[2])
            labels.append(item[1])
            weights.append(share / len(found))
            owner.append(index)
    return (
        np.array(rows, dtype=float),
        np.array(labels, dtype=float),
        np.array(weights, dtype=float),
        np.array(owner),
    )


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def blob(tree: Path, commit: str, path: str) -> str:
    try:
        return git("rev-parse", f"{commit}:{path}", cwd=tree).strip()
    except subprocess.CalledProcessError:
        return ""


def harvest_repository(repo: str, mirror_root: Path, work: Path, commits: int, hybrid: bool) -> None:
    from kbc.domain.settings import Settings
    from kbc.eval.history import MAX_FILES, mine_commits
    from kbc.services.build import build_repository
    from kbc.services.retrieve import open_retriever, profile_named

    window = WINDOW
    mode = "hybrid" if hybrid else "lexical"
    folder = work / repo.replace("/", "+")
    rows_file = folder / f"rows-{mode}.jsonl"
    if rows_file.exists():
        print(f"{repo}: rows exist, skipped", flush=True)
        return
    folder.mkdir(parents=True, exist_ok=True)
    tree, store = folder / "tree", folder / f"store-{mode}"
    mirror = mirror_root / repo.replace("/", "+") / "repo"
    if not tree.exists():
        git("clone", "-q", "--shared", str(mirror), str(tree))
    with clock() as elapsed:
        git(
            "checkout",
            "-q",
            "-f",
            "--detach",
            "origin/HEAD" if _has(tree, "origin/HEAD") else "HEAD",
            cwd=tree,
        )
        mined = mine_commits(tree, commits, MAX_FILES)
        ordered = sorted(mined.commits, key=lambda c: (c.parent_time, c.sha))
        if not ordered:
            print(f"{repo}: no qualifying commit", flush=True)
            return
        settings = Settings() if hybrid else Settings(embed_model="none")
        profile = profile_named(tree, "implementation")
        lines: list[str] = []
        kept = 0
        for first in range(0, len(ordered), window):
            batch = ordered[first : first + window]
            base = batch[0].parent
            asked = [
                c
                for c in batch
                if c.hunks and all(blob(tree, c.parent, p) == blob(tree, base, p) for p in c.answer)
            ]
            if not asked:
                continue
            git("checkout", "-q", "-f", "--detach", base, cwd=tree)
            git("clean", "-q", "-f", "-d", "-x", cwd=tree)
            build_repository(tree, settings, store)
            retriever = open_retriever(tree, settings, store)
            try:
                lines.extend(_ask(retriever, profile, repo, commit) for commit in asked)
            finally:
                retriever.close()
            kept += len(asked)
        rows_file.write_text("".join(line + "\n" for line in lines))
    print(f"{repo}: {kept} of {len(ordered)} commits asked, {elapsed.wall:.0f} s", flush=True)


def _ask(retriever: Any, profile: Any, repo: str, commit: Any) -> str:
    """One question's rows, as a JSON line."""
    from kbc.retrieval.features import file_features

    signals = retriever.signals(commit.query, profile)
    paths = retriever.candidate_paths(signals)
    gold = set(commit.answer)
    file_rows = file_features(signals, paths, retriever.repository())
    hunks = commit.lines()
    units: list[list[Any]] = []
    for path in sorted(gold & set(paths)):
        ids, rows = retriever.unit_rows(signals, path)
        spans = {u.id: (u.start, u.end) for u in retriever.matcher().by_path.get(path, [])}
        for cid, row in zip(ids, rows, strict=True):
            start, end = spans[cid]
            hit = any(start <= last and first <= end for first, last in hunks.get(path, ()))
            units.append([path, int(hit), row])
    return json.dumps(
        {
            "repo": repo,
            "sha": commit.sha,
            "gold": sorted(gold),
            "query": commit.query,
            "query_row": retriever.query_row(signals),
            "missing": sorted(gold - set(paths)),
            "files": [[p, int(p in gold), r] for p, r in zip(paths, file_rows, strict=True)],
            "units": units,
        }
    )


def _has(tree: Path, ref: str) -> bool:
    try:
        git("rev-parse", "--verify", "-q", ref, cwd=tree)
    except subprocess.CalledProcessError:
        return False
    return True


def harvest_issues(
    eval_dir: Path, mirror_root: Path, work: Path, hybrid: bool, only: frozenset[str] = frozenset()
) -> None:
    """Issue reports of the fitted repositories with the files and lines their fixes changed
    (``instances.jsonl`` and ``hunks.jsonl`` in the SWE-bench development split's format): each
    asked of a store built at its base commit, as the commits are. Rows go to
    ``WORK/<owner+name>/rows-issues-<mode>.jsonl``."""
    import subprocess as sp
    from dataclasses import dataclass

    from kbc.domain.settings import Settings
    from kbc.services.build import build_repository
    from kbc.services.retrieve import open_retriever, profile_named

    @dataclass
    class Issue:  # what _ask reads of a mined commit
        sha: str
        query: str
        answer: tuple[str, ...]
        hunks_by_path: dict[str, tuple[tuple[int, int], ...]]

        def lines(self) -> dict[str, tuple[tuple[int, int], ...]]:
            return self.hunks_by_path

    mode = "hybrid" if hybrid else "lexical"
    rows = [json.loads(line) for line in (eval_dir / "instances.jsonl").read_text().splitlines() if line]
    hunks = {
        r["instance_id"]: r["hunks"]
        for r in (json.loads(line) for line in (eval_dir / "hunks.jsonl").read_text().splitlines() if line)
    }
    settings = Settings() if hybrid else Settings(embed_model="none")
    for repo in sorted({r["repo"] for r in rows if not only or r["repo"] in only}):
        folder = work / repo.replace("/", "+")
        out = folder / f"rows-issues-{mode}.jsonl"
        if out.exists():
            continue
        folder.mkdir(parents=True, exist_ok=True)
        tree, store = folder / "tree", folder / f"store-{mode}"
        if not tree.exists():
            git("clone", "-q", "--shared", str(mirror_root / repo.replace("/", "+") / "repo"), str(tree))
        mine = [r for r in rows if r["repo"] == repo]
        dates = {
            r["base_commit"]: git("show", "-s", "--format=%cI", r["base_commit"], cwd=tree).strip()
            for r in mine
        }
        mine.sort(key=lambda r: (dates[r["base_commit"]], r["instance_id"]))
        with clock() as elapsed:
            lines = []
            for row in mine:
                try:
                    git("checkout", "-q", "-f", "--detach", row["base_commit"], cwd=tree)
                except sp.CalledProcessError:
                    continue
                git("clean", "-q", "-f", "-d", "-x", cwd=tree)
                build_repository(tree, settings, store)
                retriever = open_retriever(tree, settings, store)
                try:
                    issue = Issue(
                        row["instance_id"],
                        row["problem_statement"],
                        tuple(row["gold_files"]),
                        {
                            p: tuple(tuple(r) for r in ranges)
                            for p, ranges in hunks[row["instance_id"]].items()
                        },
                    )
                    lines.append(_ask(retriever, profile_named(tree, "implementation"), repo, issue))
                finally:
                    retriever.close()
            out.write_text("".join(line + "\n" for line in lines))
        print(f"{repo}: {len(lines)} issues asked, {elapsed.wall:.0f} s", flush=True)


def harvest_foreign(work: Path, hybrid: bool, count: int) -> None:
    """Questions no file of a repository answers: other repositories' commit messages, asked of
    its last store (every candidate labelled 0), for the confidence model."""
    from kbc.domain.settings import Settings
    from kbc.retrieval.features import file_features
    from kbc.services.retrieve import open_retriever, profile_named

    mode = "hybrid" if hybrid else "lexical"
    questions = load_questions(work, mode)
    settings = Settings() if hybrid else Settings(embed_model="none")
    for folder in sorted(p for p in work.iterdir() if (p / f"rows-{mode}.jsonl").exists()):
        out = folder / f"rows-foreign-{mode}.jsonl"
        if out.exists():
            continue
        repo = folder.name.replace("+", "/", 1)
        others = [q for q in questions if q["repo"] != repo]
        step = max(1, len(others) // count)
        picked = others[::step][:count]
        tree, store = folder / "tree", folder / f"store-{mode}"
        retriever = open_retriever(tree, settings, store)
        profile = profile_named(tree, "implementation")
        lines = []
        try:
            for question in picked:
                signals = retriever.signals(question["query"], profile)
                paths = retriever.candidate_paths(signals)
                rows = file_features(signals, paths, retriever.repository())
                lines.append(
                    json.dumps(
                        {
                            "repo": repo,
                            "from": question["repo"],
                            "sha": question["sha"],
                            "query": question["query"],
                            "query_row": retriever.query_row(signals),
                            "gold": [],
                            "files": [[p, 0, r] for p, r in zip(paths, rows, strict=True)],
                        }
                    )
                )
        finally:
            retriever.close()
        out.write_text("".join(line + "\n" for line in lines))
        print(f"{repo}: {len(lines)} foreign questions", flush=True)


def augment(work: Path) -> None:
    """Rows harvested before a file feature was added at the end of ``FILE_FEATURES`` get it
    (only ``precedent`` is computed this way): each question's history is read at its commit's
    parent (a foreign question's at the commit its repository's store was last built at), the
    commits a harvest window's build read plus at most the nine before the question in it."""
    from kbc.index.history import commit_messages
    from kbc.retrieval.features import FILE_FEATURES
    from kbc.retrieval.precedent import Precedents
    from kbc.retrieval.query import bounded
    from kbc.retrieval.report import clean_report

    width = len(FILE_FEATURES)
    for rows_file in sorted(work.glob("*/rows-*.jsonl")):
        tree = rows_file.parent / "tree"
        questions = [json.loads(line) for line in rows_file.read_text().splitlines() if line]
        if not questions or all(len(row) == width for q in questions for _, _, row in q["files"]):
            continue
        foreign = "-foreign-" in rows_file.name
        last = git("rev-parse", "HEAD", cwd=tree).strip() if foreign else ""
        cache: dict[str, Precedents] = {}
        for question in questions:
            rev = last if foreign else f"{question['sha']}^"
            if rev not in cache:
                kept = set(git("ls-tree", "-r", "--name-only", rev, cwd=tree).splitlines())
                cache[rev] = Precedents(commit_messages(tree, kept, rev=rev))
            credit = cache[rev].credit(clean_report(bounded(question["query"])))
            top = max((credit.get(path, 0.0) for path, _, _ in question["files"]), default=0.0) or 1.0
            for path, _, row in question["files"]:
                if len(row) == width - 1:
                    row.append(credit.get(path, 0.0) / top)
        rows_file.write_text("".join(json.dumps(q) + "\n" for q in questions))
        print(f"{rows_file}: {len(questions)} questions", flush=True)


# -- fitting ------------------------------------------------------------------------------
