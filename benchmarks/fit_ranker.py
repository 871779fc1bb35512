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
import os
import sys
from pathlib import Path
from typing import Any

from logistic import fit_logistic, predict
from ranker_confidence import fit_confidence, refit_confidence
from ranker_harvest import (
    all_questions,
    augment,
    harvest_foreign,
    harvest_issues,
    harvest_repository,
    load_questions,
    matrices,
)

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "kbc" / "retrieval" / "ranker.json"
C_GRID = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
ISSUE_WEIGHTS = (1.0, 3.0, 10.0)  # how much more an issue report weighs than a commit message


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
