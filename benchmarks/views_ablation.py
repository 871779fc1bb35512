"""What views add to retrieval: the golden files of three real packages asked with views and
without, and with each view kind left out in turn.

    python benchmarks/views_ablation.py [--work DIR] [--only flask,click] [--lexical]
        [--update-results]

Each package's sdist (the version its golden file names) is fetched from the registry and
unpacked under ``WORK/src`` as ``benchmarks/real_packages.py`` fetches (the paths of
``benchmarks/golden/<name>.yaml`` are relative to it), built once (``kbc build --no-llm``,
hybrid unless ``--lexical``) into ``WORK/stores/<name>``, and every golden question of the ``architecture``,
``story-breakdown`` and ``implementation`` use cases is asked of that one store in each
variant: the shipped profiles; no view retrieved (``view_kinds = []``); every kind but one.
A variant changes only which view documents retrieval may return; the index is the same.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from real_packages import fetch
from results_file import update_section

from kbc.domain.settings import Settings
from kbc.domain.views import VIEW_KINDS
from kbc.eval.metrics import Summary
from kbc.retrieval.profiles import Profile, load_profiles
from kbc.services.components import Components
from kbc.services.evaluate import evaluate_golden
from kbc.services.knowledge import KnowledgeBase

GOLDEN = Path(__file__).with_name("golden")
PACKAGES = (("flask", "3.1.3"), ("requests", "2.34.2"), ("click", "8.5.1"))
USE_CASES = ("architecture", "story-breakdown", "implementation")
# Weights tried for the architecture and story-breakdown profiles (label, fields), besides the kinds.
EXTRA_VARIANTS: tuple[tuple[str, dict[str, float]], ...] = (
    ("cited 0", {"cited": 0.0}),
    ("views 1.5", {"views": 1.5}),
    ("docs 0.9", {"docs": 0.9}),
)
# The two profiles as they were shipped before this ablation: views and docs before code.
BEFORE = {
    "architecture": {"code": 0.5, "docs": 0.9, "views": 1.5, "cited": 0.0},
    "story-breakdown": {"code": 0.5, "docs": 0.9, "views": 1.3, "cited": 0.0},
}


def variants(shipped: dict[str, Profile]) -> list[tuple[str, dict[str, Profile]]]:
    def only(kinds: tuple[str, ...]) -> dict[str, Profile]:
        return {n: dataclasses.replace(p, view_kinds=kinds) for n, p in shipped.items()}

    def weights(**changed: float) -> dict[str, Profile]:
        return {n: dataclasses.replace(p, **changed) if n in USE_CASES[:2] else p for n, p in shipped.items()}

    before = {n: dataclasses.replace(p, **BEFORE.get(n, {})) for n, p in shipped.items()}
    out = [
        ("shipped profiles", shipped),
        ("profiles before (docs, views first)", before),
        ("no views", only(())),
    ]
    if EXTRA_VARIANTS:
        out += [(f"architecture, story: {label}", weights(**changed)) for label, changed in EXTRA_VARIANTS]
    out += [(f"without {kind}", only(tuple(k for k in VIEW_KINDS if k != kind))) for kind in VIEW_KINDS]
    return out


def cell(summary: Summary | None) -> str:
    if summary is None:
        return "-"
    return f"{summary.recall_at_5:.2f} / {summary.mrr:.2f} / {summary.budget_recall:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/kbc-views-ablation"))
    parser.add_argument("--only", default="")
    parser.add_argument("--lexical", action="store_true")
    parser.add_argument("--update-results", action="store_true")
    args = parser.parse_args()
    chosen = [(n, v) for n, v in PACKAGES if not args.only or n in args.only.split(",")]
    components = Components.lexical() if args.lexical else Components()
    rows: dict[str, dict[str, dict[str, Summary]]] = {}  # variant -> package -> use case -> summary
    counts: dict[str, int] = {}
    for name, version in chosen:
        root = fetch(name, version, args.work)
        store = args.work / "stores" / name
        settings = Settings(workers=2)
        with KnowledgeBase(root, store=store, settings=settings, components=components) as kb:
            built = kb.build(no_llm=True)
        print(
            f"{name}: {built.views.views} views ({built.views.by_kind}), retrieval {built.index.retrieval}",
            file=sys.stderr,
        )
        shipped = load_profiles(root)
        for label, profiles in variants(shipped):
            report = evaluate_golden(
                root, settings, GOLDEN / f"{name}.yaml", store, USE_CASES, components, profiles
            )
            summaries = report.summaries("kbc")
            rows.setdefault(label, {})[name] = summaries
            counts[name] = summaries["overall"].questions
            print(f"  {label}: {cell(summaries['overall'])}", file=sys.stderr)
        baseline = report.summaries("bm25")
        rows.setdefault("BM25 whole files", {})[name] = baseline
    mode = "lexical" if args.lexical else "hybrid"
    header = ["package", "variant", *USE_CASES, "overall"]
    lines = [
        f"Golden files `benchmarks/golden/<package>.yaml` "
        f"({', '.join(f'{n} {version}: {counts.get(n, 0)} questions' for n, version in chosen)}), "
        f"{mode} retrieval, one store per package built by `kbc build --no-llm`. Each cell: "
        "Recall@5 / MRR / budget recall of kbc at the use case's budget.",
        "",
        "| " + " | ".join(header) + " |",
        "| --- | --- |" + " ---: |" * (len(header) - 2),
    ]
    for name, _ in chosen:
        for label, by_package in rows.items():
            summaries = by_package.get(name, {})
            cells = [cell(summaries.get(case)) for case in (*USE_CASES, "overall")]
            lines.append("| " + " | ".join([name, label, *cells]) + " |")
    text = "\n".join(lines)
    print(text)
    if args.update_results:
        command = "python benchmarks/views_ablation.py" + (" --lexical" if args.lexical else "")
        update_section(f"views-ablation-{mode}", f"What views add to retrieval ({mode})", text, command)


if __name__ == "__main__":
    main()
