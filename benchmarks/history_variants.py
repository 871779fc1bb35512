"""A repository's history asked of several ranking variants, one build per commit.

    python benchmarks/history_variants.py --repo CLONE [--history 40]
        --variant NAME[:MODULE.CONSTANT=VALUE,...] [--variant ...] [--json OUT]

``kbc eval --history N`` builds a store at each commit's parent and asks the commit's message
of it. Comparing two rankings that way costs two runs over the same builds; here each store is
built once and every variant (a set of kbc module constants, as in ``localization.py
--constant``) asks the same question of the same retriever, so the variants differ only in
their ranking. A variant with no constants is the shipped code. BM25 over whole files is
measured once, on the same questions. Retrieval is lexical, as in the history tables of
RESULTS.md.

Printed per variant: Recall@5, Recall@10, MRR, HunkAll at the use case's budget, and tokens to
gold (median over the questions with changed lines; how many never get there by 27k).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from timing import clock

from kbc.domain.settings import Settings
from kbc.eval.baseline import WholeFileBM25
from kbc.eval.history import MAX_FILES, mine_commits, repository_root
from kbc.eval.metrics import Scores, summarize
from kbc.retrieval.profiles import load_profiles
from kbc.services.components import CONFIGURED
from kbc.services.evaluate import HISTORY_USE_CASE, _ask
from kbc.services.evaluate_history import _clone, build_at_parent, history_settings
from kbc.services.retrieve import open_retriever

Constants = list[tuple[Any, str, Any]]  # (module, name, value)


def parse_variant(text: str) -> tuple[str, Constants]:
    name, _, rest = text.partition(":")
    constants: Constants = []
    for item in filter(None, rest.split(",")):
        dotted, value = item.split("=", 1)
        module_name, constant = dotted.rsplit(".", 1)
        module = importlib.import_module(module_name)
        constants.append((module, constant, type(getattr(module, constant))(float(value))))
    return name, constants


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repo", type=Path, required=True, help="a clone whose history is asked")
    parser.add_argument("--history", type=int, default=40)
    parser.add_argument(
        "--variant", action="append", default=[], required=True, metavar="NAME[:MODULE.CONSTANT=VALUE,...]"
    )
    parser.add_argument("--json", type=Path, help="write each question's scores here")
    args = parser.parse_args()
    variants = [parse_variant(v) for v in args.variant]
    shipped = {(id(m), c): getattr(m, c) for _, constants in variants for m, c, _ in constants}

    root = repository_root(args.repo)
    mined = mine_commits(root, args.history, MAX_FILES)
    profile = load_profiles(root)[HISTORY_USE_CASE]
    settings = history_settings(Settings(embed_model="none"))
    counter = CONFIGURED.token_counter()
    scores: dict[str, list[Scores]] = {name: [] for name, _ in variants} | {"bm25": []}
    rows: list[dict[str, Any]] = []
    with (
        clock() as elapsed,
        tempfile.TemporaryDirectory(prefix="kbc-variants-", ignore_cleanup_errors=True) as work,
    ):
        tree, store = Path(work) / root.name, Path(work) / "store"
        _clone(root, tree)
        for number, commit in enumerate(sorted(mined.commits, key=lambda c: (c.parent_time, c.sha)), 1):
            built = build_at_parent(tree, store, settings, commit)
            gold = built.gold
            if gold is None:
                continue
            retriever = open_retriever(tree, settings, store)
            row: dict[str, Any] = {"commit": commit.sha, "gold": list(gold.paths)}
            try:
                with WholeFileBM25(tree, built.tracked) as baseline:
                    for name, constants in variants:
                        for module, constant, value in constants:
                            setattr(module, constant, value)
                        try:
                            _, got = _ask(retriever, baseline, counter, profile, commit.query, gold)
                        finally:  # the next variant starts from the shipped values
                            for module, constant, _ in constants:
                                setattr(module, constant, shipped[(id(module), constant)])
                        scores[name].append(got["kbc"])
                        row[name] = got["kbc"].as_data()
                    scores["bm25"].append(got["bm25"])
                    row["bm25"] = got["bm25"].as_data()
            finally:
                retriever.close()
            rows.append(row)
            print(
                f"[{number}/{len(mined.commits)}] {commit.sha[:10]} "
                + " ".join(f"{name} {row[name]['rr']:.2f}" for name in scores),
                file=sys.stderr,
                flush=True,
            )
    print(f"{root.name}: {len(rows)} questions, {elapsed.wall:.0f} s")
    print("| variant | Recall@5 | Recall@10 | MRR | HunkAll@budget | tokens to gold, median (never) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, got in scores.items():
        s = summarize(got)
        median = s.tokens_to_gold_median
        median_text = "never" if median is None or median == float("inf") else f"{median:,.0f}"
        hunk = "" if s.hunk_all is None else f"{s.hunk_all:.3f}"
        print(
            f"| {name} | {s.recall_at_5:.3f} | {s.recall_at_10:.3f} | {s.mrr:.3f} | {hunk} | "
            f"{median_text} ({s.tokens_to_gold_never}) |"
        )
    if args.json:
        summary = {name: dataclasses.asdict(summarize(got)) for name, got in scores.items()}
        args.json.write_text(
            json.dumps(
                {"repository": root.name, "summary": summary, "questions": rows}, indent=1, default=str
            )
        )


if __name__ == "__main__":
    main()
