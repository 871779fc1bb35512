"""What not naming the repository costs: golden questions asked of a workspace of several
repositories, across all of them, against the same questions asked in their own repository.

    python benchmarks/workspace_quality.py NAME=REPO:GOLDEN.yaml [NAME=REPO:GOLDEN.yaml ...]
        [--markdown]

Every repository must be built (``kbc build``); each golden file's questions are about its
own repository. For each question, at its use case's budget:

- *named*: the slice of its own repository (what ``"repository": NAME`` answers);
- *across, weighted*: the slice across every repository, merged as shipped (each
  repository's reciprocal ranks weighed by its slice's confidence);
- *across, unweighted*: the same with every repository weighing 1 (plain reciprocal-rank
  fusion), to show what the confidence weight does;
- *across, best only*: the whole budget to the repository with the highest confidence.

Scored on the items of the question's own repository (``kbc.eval.metrics``): budget recall
(a gold file with a gold line in the slice), HunkAll (every gold line in the slice), and
whether the slice's first item is from the right repository. The confidence weight and K
were set before this was run (K is the usual 60), not fitted to it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kbc.domain.settings import load_settings
from kbc.domain.workspace import RepositoryEntry
from kbc.eval.golden import GoldenQuestion, read_golden
from kbc.eval.metrics import Gold, Passage, budget_recall, hunk_all
from kbc.retrieval.results import Slice
from kbc.services.fused import confidence_weight, retrieve_across
from kbc.services.payloads import slice_data
from kbc.services.workspace import Workspace


def scores(items: list[dict[str, Any]], name: str, question: GoldenQuestion) -> dict[str, float | None]:
    own = [
        Passage(i["path"], i["start_line"], i["end_line"]) for i in items if i.get("repository", name) == name
    ]
    gold = Gold(question.paths, question.lines)
    first = items[0].get("repository", name) == name if items else False
    return {"recall": budget_recall(own, gold), "hunk": hunk_all(own, gold), "first": float(first)}


def best_only(workspace: Workspace, task: str, use_case: str) -> dict[str, Any]:
    """The whole budget to the repository whose slice is most confident."""
    found = []
    for name in workspace.names():
        with workspace.using(name) as kb:
            sliced, _ = kb.slice_for(task, use_case)
        found.append((confidence_weight(sliced), name, sliced))
    _, name, sliced = max(found, key=lambda row: (row[0], row[1]))
    return {"items": [dict(i, repository=name) for i in slice_data(sliced)["items"]]}


def unweighted(_found: Slice) -> float:
    """Every repository's slice weighs the same."""
    return 1.0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("repositories", nargs="+", help="NAME=REPO:GOLDEN.yaml")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument(
        "--loro",
        default="",
        help="Comma-separated reciprocal-rank constants: for each "
        "repository left out, the one best on the others, scored on it.",
    )
    args = parser.parse_args()
    golden: dict[str, list[GoldenQuestion]] = {}
    entries = []
    for spec in args.repositories:
        name, _, rest = spec.partition("=")
        repo, _, path = rest.rpartition(":")
        golden[name] = read_golden(Path(path))
        entries.append(RepositoryEntry(name, repo))
    settings = load_settings(Path("."))
    workspace = Workspace(entries, settings, settings_for=lambda root: load_settings(root))
    if args.loro:
        try:
            loro(workspace, golden, [int(k) for k in args.loro.split(",")])
        finally:
            workspace.close()
        return
    variants = ("named", "across, weighted", "across, unweighted", "across, best only")
    rows: dict[str, dict[str, list[float]]] = {v: {"recall": [], "hunk": [], "first": []} for v in variants}
    per_repository: dict[tuple[str, str], list[float]] = {}
    try:
        for name, questions in golden.items():
            for question in questions:
                with workspace.using(name) as kb:
                    named = slice_data(kb.slice_for(question.question, question.use_case)[0])
                answers = {
                    "named": named["items"],
                    "across, weighted": retrieve_across(workspace, question.question, question.use_case)[
                        "items"
                    ],
                    "across, unweighted": retrieve_across(
                        workspace, question.question, question.use_case, weigh=unweighted
                    )["items"],
                    "across, best only": best_only(workspace, question.question, question.use_case)["items"],
                }
                for variant, items in answers.items():
                    found = scores(items, name, question)
                    for key, value in found.items():
                        if value is not None:
                            rows[variant][key].append(value)
                    if found["hunk"] is not None:
                        per_repository.setdefault((variant, name), []).append(found["hunk"])
    finally:
        workspace.close()
    summary = {
        v: {k: (sum(vals) / len(vals) if vals else None, len(vals)) for k, vals in r.items()}
        for v, r in rows.items()
    }
    print(
        json.dumps(
            {
                "summary": summary,
                "hunk_by_repository": {f"{v} / {n}": sum(x) / len(x) for (v, n), x in per_repository.items()},
            },
            indent=1,
        )
    )
    if args.markdown:
        names = list(golden)
        print(
            f"{sum(len(q) for q in golden.values())} golden questions of {', '.join(names)}, each at its "
            "use case's budget, scored on its own repository's items.\n"
        )
        print(
            "| | budget recall | HunkAll | first item from the right repository | "
            + " | ".join(f"HunkAll {n}" for n in names)
            + " |"
        )
        print("|---" * (4 + len(names)) + "|")
        for variant in variants:
            s = summary[variant]
            print(
                f"| {variant} | {s['recall'][0]:.3f} | {s['hunk'][0]:.3f} | {s['first'][0]:.3f} | "
                + " | ".join(
                    f"{sum(per_repository[(variant, n)]) / len(per_repository[(variant, n)]):.3f}"
                    if per_repository.get((variant, n))
                    else "–"
                    for n in names
                )
                + " |"
            )


def loro(workspace: Workspace, golden: dict[str, list[GoldenQuestion]], constants: list[int]) -> None:
    """Leave one repository out: the constant with the best mean HunkAll (then budget recall)
    on the others' questions, against the shipped one, both scored on the repository left out."""
    from kbc.services.fused import K

    scored: dict[tuple[int, str], list[tuple[float, float]]] = {}
    for k in sorted(set(constants) | {K}):
        for name, questions in golden.items():
            for question in questions:
                items = retrieve_across(workspace, question.question, question.use_case, k=k)["items"]
                found = scores(items, name, question)
                scored.setdefault((k, name), []).append(
                    (
                        found["hunk"] if found["hunk"] is not None else float("nan"),
                        float(found["recall"] or 0.0),
                    )
                )

    def mean(rows: list[tuple[float, float]]) -> tuple[float, float]:
        hunks = [h for h, _ in rows if h == h]
        return (sum(hunks) / len(hunks) if hunks else 0.0, sum(r for _, r in rows) / len(rows))

    print("| left out | chosen on the others | HunkAll, chosen / shipped | budget recall, chosen / shipped |")
    print("|---|---:|---:|---:|")
    for out in golden:
        rest = [n for n in golden if n != out]
        chosen = max(
            sorted(set(constants) | {K}), key=lambda k: mean([row for n in rest for row in scored[(k, n)]])
        )
        got, shipped = mean(scored[(chosen, out)]), mean(scored[(K, out)])
        print(f"| {out} | {chosen} | {got[0]:.3f} / {shipped[0]:.3f} | {got[1]:.3f} / {shipped[1]:.3f} |")


if __name__ == "__main__":
    sys.exit(main())
