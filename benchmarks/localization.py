"""File localization on the SWE-bench development split, against BM25 over whole files.

    MIRROR_ROOT=DIR python benchmarks/localization.py [--eval DIR] [--work DIR]
        [--repos pytest,flask] [--limit N] [--update-results]

For every instance the repository is checked out at its base commit (one
clone per repository, instances in commit order, so ``kbc build`` refreshes
incrementally and embeds only new chunks), built, and queried with the
issue text under the ``implementation`` profile. Measured on the same
instances in the same run:

- kbc: file Acc@1/5/10 over the ranked chunks' distinct files, and budget
  recall (All / Avg) of the packed slice at 13k and 27k tokens;
- baseline: BM25 (SQLite FTS5, kbc's code tokenizer) over whole files, and the
  same budgets filled with whole files in rank order (the SWE-bench setting).

Results per instance are appended to ``WORK/results.jsonl`` so an interrupted
run resumes where it stopped. ``MIRROR_ROOT`` holds bare mirrors named
``owner+name/repo``; ``--eval`` is the split's folder (instances.jsonl).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

from results_file import update_section

from kbc.domain.settings import Settings
from kbc.index.tokencount import default_counter
from kbc.retrieval.baseline import WholeFileBM25
from kbc.services.build import build_repository
from kbc.services.retrieve import open_retriever, profile_named

BUDGETS = (13_000, 27_000)
KS = (1, 5, 10)


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def checkout(mirror: Path, tree: Path, commit: str) -> None:
    if not tree.exists():
        git("clone", "-q", "--no-checkout", str(mirror), str(tree))
    git("checkout", "-q", "-f", commit, cwd=tree)
    git("clean", "-q", "-f", "-d", "-x", cwd=tree)


def baseline(tree: Path, paths: list[str], query: str) -> tuple[list[str], dict[int, set[str]]]:
    """BM25 over whole files: the ranked paths, and the paths that fill each budget."""
    counter = default_counter()
    with WholeFileBM25(tree, paths) as bm25:
        ranked = bm25.rank(query)
        return ranked, {budget: set(bm25.fill(ranked, budget, counter)) for budget in BUDGETS}


def accuracy(ranked: list[str], gold: set[str]) -> dict[str, bool]:
    return {f"acc@{k}": gold <= set(ranked[:k]) for k in KS}


def recall(found: set[str], gold: set[str]) -> tuple[bool, float]:
    return gold <= found, len(gold & found) / len(gold)


def run_instance(row: dict, mirror_root: Path, work: Path,  # type: ignore[type-arg]
                 overrides: dict[str, float]) -> dict:  # type: ignore[type-arg]
    owner, name = row["repo"].split("/")
    tree = work / name / "tree"
    store = work / name / "store"
    tree.parent.mkdir(parents=True, exist_ok=True)
    checkout(mirror_root / f"{owner}+{name}" / "repo", tree, row["base_commit"])
    started = time.perf_counter()
    built = build_repository(tree, Settings(), store)
    build_seconds = time.perf_counter() - started
    gold = set(row["gold_files"])
    query = row["problem_statement"]
    profile = dataclasses.replace(profile_named(tree, "implementation"), **overrides)
    retriever = open_retriever(tree, Settings(), store)
    try:
        ranked, chunks = retriever.ranked(query, profile)
        files: list[str] = []
        for cid, _ in ranked:
            if chunks[cid].path not in files:
                files.append(chunks[cid].path)
        slices = {b: {i.path for i in retriever.retrieve(query, profile, b).items} for b in BUDGETS}
        mode = retriever.mode
    finally:
        retriever.close()
    base_ranked, base_filled = baseline(tree, [f.path for f in _inventory(store)], query)
    result = {"instance_id": row["instance_id"], "repo": row["repo"], "gold": sorted(gold),
              "retrieval": mode, "build_seconds": round(build_seconds, 1),
              "embedded": built.index.embedded, "kbc_top": files[:10], "bm25_top": base_ranked[:10]}
    for system, ranking, filled in (("kbc", files, slices), ("bm25", base_ranked, base_filled)):
        for key, hit in accuracy(ranking, gold).items():
            result[f"{system}.{key}"] = hit
        for budget in BUDGETS:
            everything, share = recall(filled[budget], gold)
            result[f"{system}.all@{budget}"] = everything
            result[f"{system}.avg@{budget}"] = share
    return result


def _inventory(store: Path):  # type: ignore[no-untyped-def]
    from kbc.store.facts_store import FactsStore

    return FactsStore(store).inventory().files


def table(results: list[dict]) -> str:  # type: ignore[type-arg]
    n = len(results)
    metrics = [*(f"acc@{k}" for k in KS), *(f"{m}@{b}" for b in BUDGETS for m in ("all", "avg"))]
    labels = {"acc@1": "Acc@1", "acc@5": "Acc@5", "acc@10": "Acc@10", "all@13000": "13k All",
              "avg@13000": "13k Avg", "all@27000": "27k All", "avg@27000": "27k Avg"}
    lines = ["| system | " + " | ".join(labels[m] for m in metrics) + " |",
             "| --- |" + " ---: |" * len(metrics)]
    for system, title in (("kbc", "kbc retrieve (implementation)"), ("bm25", "BM25 whole files")):
        cells = [f"{100 * statistics.fmean(float(r[f'{system}.{m}']) for r in results):.1f}%"
                 for m in metrics]
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    by_repo: dict[str, int] = {}
    for r in results:
        by_repo[r["repo"]] = by_repo.get(r["repo"], 0) + 1
    modes = sorted({r["retrieval"] for r in results})
    return "\n".join([
        f"{n} instances ({', '.join(f'{k} {v}' for k, v in sorted(by_repo.items()))}); "
        f"kbc retrieval: {', '.join(modes)}. Date: {date.today().isoformat()}.", "", *lines])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval", type=Path,
                        default=Path(__file__).resolve().parents[2] / "shared" / "eval" / "swebench-dev")
    parser.add_argument("--work", type=Path, default=Path("/tmp/kbc-localization"))
    parser.add_argument("--repos", default="", help="comma-separated repository names to run")
    parser.add_argument("--limit", type=int, default=0, help="at most this many instances")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="override a field of the implementation profile (an ablation)")
    parser.add_argument("--update-results", action="store_true")
    args = parser.parse_args()
    overrides = {k: float(v) for k, v in (item.split("=", 1) for item in args.set)}
    mirror_root = Path(os.environ.get("MIRROR_ROOT", ""))
    if not mirror_root.is_dir():
        sys.exit("set MIRROR_ROOT to the folder holding owner+name/repo mirrors")
    rows = [json.loads(line) for line in (args.eval / "instances.jsonl").read_text().splitlines() if line]
    wanted = {r.strip() for r in args.repos.split(",") if r.strip()}
    if wanted:
        rows = [r for r in rows if r["repo"].split("/")[1] in wanted]

    def commit_date(row: dict) -> str:  # type: ignore[type-arg]
        owner, name = row["repo"].split("/")
        return git("--git-dir", str(mirror_root / f"{owner}+{name}" / "repo"), "show", "-s",
                   "--format=%cI", row["base_commit"]).strip()

    rows.sort(key=lambda r: (r["repo"], commit_date(r), r["instance_id"]))
    if args.limit:
        rows = rows[: args.limit]
    args.work.mkdir(parents=True, exist_ok=True)
    log = args.work / "results.jsonl"
    done = {json.loads(line)["instance_id"]: json.loads(line)
            for line in log.read_text().splitlines()} if log.exists() else {}
    for index, row in enumerate(rows, start=1):
        if row["instance_id"] in done:
            continue
        result = run_instance(row, mirror_root, args.work, overrides)
        done[row["instance_id"]] = result
        with log.open("a") as fh:
            fh.write(json.dumps(result) + "\n")
        print(f"[{index}/{len(rows)}] {row['instance_id']}: kbc acc@5={result['kbc.acc@5']} "
              f"bm25 acc@5={result['bm25.acc@5']} build {result['build_seconds']}s "
              f"embedded {result['embedded']}", flush=True)
    results = [done[r["instance_id"]] for r in rows if r["instance_id"] in done]
    text = table(results)
    print(text)
    if args.update_results:
        update_section("localization", "File localization on the SWE-bench development split "
                       "(`benchmarks/localization.py`)", text,
                       "MIRROR_ROOT=... python benchmarks/localization.py --update-results")


if __name__ == "__main__":
    main()
