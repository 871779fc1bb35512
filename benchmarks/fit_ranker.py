"""Fit kbc's ranking model on the history of many public repositories.

    MIRROR_ROOT=DIR python benchmarks/fit_ranker.py harvest --repos owner/name,... [--commits 150]
        [--work DIR] [--hybrid]
    python benchmarks/fit_ranker.py augment [--work DIR]
    python benchmarks/fit_ranker.py fit [--work DIR] [--out kbc/retrieval/ranker.json]
    python benchmarks/fit_ranker.py validate [--work DIR]

**Questions.** A commit is a question with a known answer: its message says what had to be
done, the source files and lines it changed are where (``kbc.eval.history``). For
each repository the newest ``--commits`` qualifying commits are mined; the store is built
once, at the parent of the oldest of them, and a commit is asked of it only when every file
it changed is, at the commit's parent, byte for byte the file of that store: the lines it
changed are then numbered as the store numbers them, and nothing of the answer leaks into
the store. ``MIRROR_ROOT`` holds bare mirrors named ``owner+name/repo``.

**Rows.** Each question is searched as ``kbc retrieve`` searches (the implementation use
case) and every candidate file becomes a row of ``kbc.retrieval.features.FILE_FEATURES``,
labelled 1 when the commit changed it; every unit of a changed file that is a candidate
becomes a row of ``UNIT_FEATURES``, labelled 1 when it holds a changed line. Rows go to
``WORK/<owner+name>/rows-<mode>.jsonl`` (resumable: a repository with rows is not asked again).

**Fit.** Two L2-regularised logistic regressions (files, units) per retrieval mode, on
standardised features, each question weighing the same in total (so a repository with many
questions, or a question with many candidates, does not dominate). The regularisation is
chosen by leave-one-repository-out cross-validation over the harvested repositories (the
mean over held-out repositories of the files' MRR); the figures are written into the model's
``about``. Only repositories named by ``--repos`` at harvest are used: the evaluation sets
(the SWE-bench development split, the history repositories, the held-out issues) are never
fitted on.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "kbc" / "retrieval" / "ranker.json"
C_GRID = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
WINDOW = 10  # commits asked of one build (at the parent of the first)
ISSUE_WEIGHTS = (1.0, 3.0, 10.0)  # how much more an issue report weighs than a commit message


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
    started = time.perf_counter()
    git("checkout", "-q", "-f", "--detach", "origin/HEAD" if _has(tree, "origin/HEAD") else "HEAD", cwd=tree)
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
    print(
        f"{repo}: {kept} of {len(ordered)} commits asked, {time.perf_counter() - started:.0f} s", flush=True
    )


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
        started = time.perf_counter()
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
                    {p: tuple(tuple(r) for r in ranges) for p, ranges in hunks[row["instance_id"]].items()},
                )
                lines.append(_ask(retriever, profile_named(tree, "implementation"), repo, issue))
            finally:
                retriever.close()
        out.write_text("".join(line + "\n" for line in lines))
        print(f"{repo}: {len(lines)} issues asked, {time.perf_counter() - started:.0f} s", flush=True)


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


def fit_logistic(x: Any, y: Any, w: Any, c: float) -> tuple[Any, Any, Any, float]:
    """Weighted L2 logistic regression on standardised ``x``: (mean, scale, weights, bias)."""
    import numpy as np
    from scipy.optimize import minimize

    x = np.where(np.isnan(x), np.nanmean(x, axis=0), x)  # unknown (no history): the mean
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    z = (x - mean) / scale
    total = w.sum()

    def loss(theta: Any) -> tuple[float, Any]:
        beta, bias = theta[:-1], theta[-1]
        margin = z @ beta + bias
        p = 1.0 / (1.0 + np.exp(-np.clip(margin, -30, 30)))
        eps = 1e-12
        value = -(w * (y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))).sum() / total
        value += 0.5 / (c * total) * (beta @ beta) * 1.0
        grad_margin = w * (p - y) / total
        grad = np.concatenate([z.T @ grad_margin + beta / (c * total), [grad_margin.sum()]])
        return value, grad

    theta0 = np.zeros(z.shape[1] + 1)
    result = minimize(loss, theta0, jac=True, method="L-BFGS-B", options={"maxiter": 2000})
    return mean, scale, result.x[:-1], float(result.x[-1])


def predict(model: tuple[Any, Any, Any, float], x: Any) -> Any:
    mean, scale, beta, bias = model
    return ((x - mean) / scale) @ beta + bias


def file_mrr(questions: list[dict[str, Any]], model: tuple[Any, Any, Any, float]) -> dict[str, float]:
    """MRR of the first changed file, and Acc@1/5 (every changed file among the first k)."""
    import numpy as np

    rr, acc1, acc5 = [], [], []
    for question in questions:
        found = question["files"]
        if not found:
            rr.append(0.0), acc1.append(0.0), acc5.append(0.0)
            continue
        scores = predict(model, np.array([item[2] for item in found], dtype=float))
        order = sorted(range(len(found)), key=lambda i: (-scores[i], found[i][0]))
        ranks = [position for position, i in enumerate(order, start=1) if found[i][1]]
        gold = len(question["gold"])
        rr.append(1.0 / ranks[0] if ranks else 0.0)
        acc1.append(float(len(ranks) == gold and ranks and max(ranks) <= 1))
        acc5.append(float(len(ranks) == gold and ranks and max(ranks) <= 5))
    return {"mrr": float(np.mean(rr)), "acc@1": float(np.mean(acc1)), "acc@5": float(np.mean(acc5))}


def unit_hit(questions: list[dict[str, Any]], model: tuple[Any, Any, Any, float]) -> float:
    """The share of changed files whose best-scored unit holds a changed line."""
    import numpy as np

    hits = []
    for question in questions:
        by_path: dict[str, list[Any]] = {}
        for path, label, row in question["units"]:
            by_path.setdefault(path, []).append((label, row))
        for found in by_path.values():
            if not any(label for label, _ in found):
                continue
            scores = predict(model, np.array([row for _, row in found], dtype=float))
            hits.append(float(found[int(np.argmax(scores))][0]))
    return float(np.mean(hits)) if hits else 0.0


def cross_validate(
    questions: list[dict[str, Any]], part: str
) -> tuple[tuple[float, float], dict[str, float]]:
    """The regularisation and the weight of issue reports with the best mean held-out score,
    leaving one repository out. The score is read on the held-out repository's issue reports
    when there are any (the questions kbc is asked), else on its commits: the files' MRR, or
    for units the share of changed files whose best unit holds a changed line."""
    import numpy as np

    repos = sorted({q["repo"] for q in questions})
    results: dict[str, float] = {}
    if len(repos) < 2:
        return (1.0, 1.0), results
    issues = any(q.get("issue") for q in questions)
    for c in C_GRID:
        for issue_weight in ISSUE_WEIGHTS if issues else (1.0,):
            scores = []
            for held in repos:
                train = [q for q in questions if q["repo"] != held]
                test = [q for q in questions if q["repo"] == held and (q.get("issue") or not issues)]
                if not test:
                    continue
                x, y, w, _ = matrices(train, part, issue_weight)
                model = fit_logistic(x, y, w, c)
                scores.append(file_mrr(test, model)["mrr"] if part == "files" else unit_hit(test, model))
            results[f"{c}/{issue_weight}"] = float(np.mean(scores))
    best = max(results, key=lambda k: (results[k], -float(k.split("/")[0])))
    c, issue_weight = (float(v) for v in best.split("/"))
    return (c, issue_weight), results


def confidence_rows(
    questions: list[dict[str, Any]], foreign: list[dict[str, Any]], c: float, issue_weight: float = 1.0
) -> tuple[Any, Any, Any, Any, Any]:
    """Rows of CONFIDENCE_FEATURES with the file model's probabilities cross-fitted (the file
    model that scores a repository's questions never saw that repository), labels (1: a file
    the commit changed is among the first five; foreign questions 0), weights (own and foreign
    questions weigh the same in total), repositories and which rows are own questions."""
    import numpy as np

    from kbc.retrieval.features import confidence_features

    rows, labels, weights, repos = [], [], [], []
    for held in sorted({q["repo"] for q in questions}):
        train = [q for q in questions if q["repo"] != held]
        x, y, w, _ = matrices(train, "files", issue_weight)
        model = fit_logistic(x, y, w, c)
        for own, group in (
            (True, [q for q in questions if q["repo"] == held]),
            (False, [q for q in foreign if q["repo"] == held]),
        ):
            for question in group:
                found = question["files"]
                scores = predict(model, np.array([i[2] for i in found], dtype=float)) if found else []
                probabilities = [1 / (1 + math.exp(-z)) for z in scores]
                order = sorted(range(len(found)), key=lambda i: (-scores[i], found[i][0]))[:5]
                label = int(own and any(found[i][1] for i in order))
                rows.append(confidence_features(question["query_row"], probabilities))
                labels.append(label)
                weights.append(1.0 if own else 0.0)
                repos.append(held)
    own = np.array(weights) > 0
    # each half weighs as many rows as there are, half each (the penalty is read against that)
    balanced = len(own) / 2 * np.where(own, 1.0 / max(int(own.sum()), 1), 1.0 / max(int((~own).sum()), 1))
    return np.array(rows, dtype=float), np.array(labels, dtype=float), balanced, np.array(repos), own


def choose_floor(scores: Any, labels: Any, own: Any) -> tuple[float, dict[str, float]]:
    """The confidence below which a slice is marked low: the threshold with the best balanced
    accuracy between own questions answered in the first five files (above) and foreign
    questions (below)."""
    import numpy as np

    answered = scores[(labels == 1) & own]
    foreign = scores[~own]
    best, floor = -1.0, 0.5
    for threshold in np.unique(np.round(scores, 3)):
        balanced = ((answered >= threshold).mean() + (foreign < threshold).mean()) / 2
        if balanced > best:
            best, floor = balanced, float(threshold)
    unanswered = scores[(labels == 0) & own]
    return floor, {
        "answered_above": round(float((answered >= floor).mean()), 4),
        "foreign_below": round(float((foreign < floor).mean()), 4),
        "unanswered_below": round(float((unanswered < floor).mean()), 4) if len(unanswered) else 0.0,
        "answered": int(len(answered)),
        "foreign": int(len(foreign)),
        "unanswered": int(len(unanswered)),
    }


def fit_confidence(
    questions: list[dict[str, Any]],
    foreign: list[dict[str, Any]],
    files: tuple[float, float],
    part_data: dict[str, Any],
    about: dict[str, Any],
) -> None:
    """The confidence model and its floor, into ``part_data`` and ``about``."""
    import numpy as np

    from kbc.retrieval.features import CONFIDENCE_FEATURES

    x, y, w, repos, own = confidence_rows(questions, foreign, *files)
    # cross-validated confidences, for the floor: leave each repository out
    held_scores = np.zeros(len(y))
    for repo in sorted(set(repos)):
        mask = repos == repo
        model = fit_logistic(x[~mask], y[~mask], w[~mask], 1.0)
        held_scores[mask] = 1 / (1 + np.exp(-predict(model, x[mask])))
    floor, rates = choose_floor(held_scores, y, own)
    mean, scale, beta, bias = fit_logistic(x, y, w, 1.0)
    part_data["confidence"] = {
        "features": list(CONFIDENCE_FEATURES),
        "mean": [round(v, 6) for v in mean],
        "scale": [round(v, 6) for v in scale],
        "weights": [round(v, 6) for v in beta],
        "bias": round(bias, 6),
    }
    part_data["floor"] = round(floor, 3)
    about["confidence"] = {"floor": round(floor, 3), "held_out": rates}


def refit_confidence(work: Path, out: Path) -> None:
    """The confidence model again, on the file model's chosen settings (``out`` as written by fit)."""
    data = json.loads(out.read_text())
    for mode in ("lexical", "hybrid"):
        if mode not in data:
            continue
        about = data["about"][mode]
        files = (about["files"]["c"], about["files"].get("issue_weight", 1.0))
        fit_confidence(
            all_questions(work, mode), load_questions(work, f"foreign-{mode}"), files, data[mode], about
        )
        print(mode, json.dumps(about["confidence"]))
    out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def fit(work: Path, out: Path) -> None:

    from kbc.retrieval.features import FILE_FEATURES, UNIT_FEATURES

    data: dict[str, Any] = {"about": {}}
    for mode in ("lexical", "hybrid"):
        questions = all_questions(work, mode)
        if not questions:
            continue
        part_data = {}
        about: dict[str, Any] = {
            "repositories": sorted({q["repo"] for q in questions}),
            "questions": len(questions),
            "issue_reports": sum(1 for q in questions if q.get("issue")),
        }
        chosen: dict[str, tuple[float, float]] = {}
        for part, names in (("files", FILE_FEATURES), ("units", UNIT_FEATURES)):
            best, grid = cross_validate(questions, part)
            chosen[part] = best
            x, y, w, _ = matrices(questions, part, best[1])
            mean, scale, beta, bias = fit_logistic(x, y, w, best[0])
            part_data[part] = {
                "features": list(names),
                "mean": [round(v, 6) for v in mean],
                "scale": [round(v, 6) for v in scale],
                "weights": [round(v, 6) for v in beta],
                "bias": round(bias, 6),
            }
            about[part] = {
                "c": best[0],
                "issue_weight": best[1],
                "held_out": {k: round(v, 4) for k, v in grid.items()},
                "rows": int(len(y)),
                "positives": int(y.sum()),
            }
        foreign = load_questions(work, f"foreign-{mode}")
        if foreign:
            fit_confidence(questions, foreign, chosen["files"], part_data, about)
        data[mode] = part_data
        data["about"][mode] = about
        print(json.dumps(about, indent=1), flush=True)
    out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"wrote {out}")


def validate(work: Path) -> None:
    """Per held-out repository: the file model fitted on the others, on its commits and on its
    issue reports."""
    for mode in ("lexical", "hybrid"):
        questions = all_questions(work, mode)
        if not questions:
            continue
        repos = sorted({q["repo"] for q in questions})
        (c, issue_weight), _ = cross_validate(questions, "files")
        print(f"{mode}: C={c}, issue weight {issue_weight}")
        for held in repos:
            train = [q for q in questions if q["repo"] != held]
            x, y, w, _ = matrices(train, "files", issue_weight)
            model = fit_logistic(x, y, w, c)
            mine = [q for q in questions if q["repo"] == held]
            for kind, test in (
                ("commits", [q for q in mine if not q.get("issue")]),
                ("issues", [q for q in mine if q.get("issue")]),
            ):
                if test:
                    got = file_mrr(test, model)
                    print(
                        f"  {held:36} {kind:7} n={len(test):4}  MRR {got['mrr']:.3f}  "
                        f"Acc@1 {got['acc@1']:.3f}  Acc@5 {got['acc@5']:.3f}"
                    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "action", choices=("harvest", "issues", "foreign", "augment", "fit", "confidence", "validate")
    )
    parser.add_argument(
        "--eval",
        type=Path,
        action="append",
        default=[],
        help="issues: a folder of instances.jsonl and hunks.jsonl (repeatable)",
    )
    parser.add_argument("--foreign", type=int, default=40, help="foreign questions per repository")
    parser.add_argument("--repos", default="", help="owner/name,... (harvest)")
    parser.add_argument("--commits", type=int, default=150)
    parser.add_argument("--work", type=Path, default=Path("/tmp/kbc-ranker"))
    parser.add_argument("--hybrid", action="store_true", help="build and ask with embeddings")
    parser.add_argument("--out", type=Path, default=MODEL)
    args = parser.parse_args()
    if args.action == "harvest":
        mirror_root = Path(os.environ.get("MIRROR_ROOT", ""))
        if not mirror_root.is_dir():
            sys.exit("set MIRROR_ROOT to the folder holding owner+name/repo mirrors")
        for repo in filter(None, (r.strip() for r in args.repos.split(","))):
            try:
                harvest_repository(repo, mirror_root, args.work, args.commits, args.hybrid)
            except Exception as exc:
                print(f"{repo}: failed: {exc!r}", flush=True)
    elif args.action == "issues":
        mirror_root = Path(os.environ.get("MIRROR_ROOT", ""))
        only = frozenset(filter(None, (r.strip() for r in args.repos.split(","))))
        for folder in args.eval:
            harvest_issues(folder, mirror_root, args.work, args.hybrid, only)
    elif args.action == "foreign":
        harvest_foreign(args.work, args.hybrid, args.foreign)
    elif args.action == "augment":
        augment(args.work)
    elif args.action == "fit":
        fit(args.work, args.out)
    elif args.action == "confidence":
        refit_confidence(args.work, args.out)
    else:
        validate(args.work)


if __name__ == "__main__":
    main()
