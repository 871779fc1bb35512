"""Localization on the SWE-bench development split: files and lines, against BM25 over whole files.

    MIRROR_ROOT=DIR python benchmarks/localization.py [--eval DIR] [--work DIR]
        [--repos pytest,flask] [--limit N] [--keep-stores] [--reuse-stores]
        [--set FIELD=VALUE] [--lexical] [--update-results]

For every instance the repository is checked out at its base commit (one
clone per repository, instances in commit order, so ``kbc build`` refreshes
incrementally and embeds only new units), built, and queried with the issue
text under the ``implementation`` profile. Measured on the same instances in
the same run:

- kbc: file Acc@1/5/10 over the ranked items' distinct repository files (view
  documents are not files of the repository and are left out of the ranking);
  the slice packed at every budget from 1k to 27k tokens (1k steps);
- baseline: BM25 (SQLite FTS5, kbc's code tokenizer) over whole files, and the
  same budgets filled with whole files in rank order (the SWE-bench setting).

What is recorded per instance (``WORK/results.jsonl``) is raw: the rankings and
each budget's slice as ``[path, start, end]`` ranges. The metrics are computed
from it when the table is written, so a run is never repeated to add one:

- Acc@k: every gold file among the first k files; All / Avg at 13k and 27k: the
  share of instances whose slice holds every gold file / the mean share held;
- HunkAll at 13k and 27k: the share of instances whose slice holds every line
  the accepted fix changes (``hunks.jsonl``); a whole file holds all of its lines;
- tokens to gold: the smallest budget (1k steps) at which the slice holds every
  changed line; the median over instances, and how many never get there by 27k.

An interrupted run resumes where it stopped. ``--keep-stores`` keeps a copy of
each instance's store (without the Chroma folder: retrieval searches the
vector snapshot) under ``WORK/stores/``, and ``--reuse-stores`` answers from
those copies without building: a ranking change is then measured on every
instance in minutes (a store kept before builds read the repository's latest commits gets
them from the checkout at its base commit, as its build would have). ``MIRROR_ROOT`` holds
bare mirrors named ``owner+name/repo``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from common import set_constants
from localization_metrics import BUDGETS, Row, instance_metrics, per_repository, table
from results_file import update_section
from timing import clock

from kbc.domain.knowledge_roots import KnowledgeRoot
from kbc.domain.models import OUTSIDE_KINDS
from kbc.domain.settings import Settings
from kbc.eval.baseline import WholeFileBM25
from kbc.index.tokencount import default_counter
from kbc.retrieval.results import without
from kbc.services.build import build_repository
from kbc.services.retrieve import open_retriever, profile_named
from kbc.services.team import chosen_scopes, excluded, read_manifest

TOP = 50  # files kept per ranking


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def checkout(mirror: Path, tree: Path, commit: str) -> None:
    if not tree.exists():
        git("clone", "-q", "--no-checkout", str(mirror), str(tree))
    try:
        git("checkout", "-q", "-f", commit, cwd=tree)
    except subprocess.CalledProcessError:
        # A mirror may lack its largest blobs (data files): the checkout then writes every other
        # file and leaves those out, which is all a build of the sources needs.
        left = git("status", "--porcelain", cwd=tree).splitlines()
        if git("rev-parse", "HEAD", cwd=tree).strip() != commit or any(not e.startswith(" D") for e in left):
            raise
    git("clean", "-q", "-f", "-d", "-x", cwd=tree)


def baseline(tree: Path, paths: list[str], query: str) -> tuple[list[str], dict[int, list[str]]]:
    """BM25 over whole files: the ranked paths, and the paths that fill each budget."""
    counter = default_counter()
    with WholeFileBM25(tree, paths) as bm25:
        ranked = bm25.rank(query)
        return ranked, {budget: bm25.fill(ranked, budget, counter) for budget in BUDGETS}


def _inventory_paths(store: Path) -> list[str]:
    from kbc.store.facts_store import FactsStore

    return [f.path for f in FactsStore(store).inventory().files]


def fill_precedents(tree: Path, store: Path) -> None:
    """A store kept before builds read the latest commits gets them as a build would, from the
    tree checked out at the store's commit (nothing later is read)."""
    from kbc.index.history import commit_messages
    from kbc.index.lexical import PRECEDENTS, LexicalIndex
    from kbc.store.layout import lexical_path

    lexical = LexicalIndex(lexical_path(store))
    try:
        if not lexical.meta(PRECEDENTS):
            lexical.set_meta(PRECEDENTS, json.dumps(commit_messages(tree, set(_inventory_paths(store)))))
            lexical.commit()
    finally:
        lexical.close()


def keep_store(store: Path, kept: Path) -> None:
    """A copy of ``store`` that retrieval can answer from: no Chroma folder, no analysis cache."""
    if kept.exists():
        shutil.rmtree(kept)
    shutil.copytree(
        store,
        kept,
        ignore=lambda folder, names: [
            n for n in names if n in ("chroma", "cache") or n.startswith(("chroma.broken", "lock"))
        ],
    )


def run_instance(  # noqa: PLR0913 - one instance's run, every input by name
    row: Row,
    mirror_root: Path,
    work: Path,
    overrides: dict[str, float],
    keep: bool,
    reuse: bool,
    stores: Path,
    knowledge: Path | None = None,
    unseen: bool = False,
    lexical: bool = False,
    build_lexical: bool = False,
) -> Row:
    owner, name = row["repo"].split("/")
    tree = work / name / "tree"
    store = work / name / "store"
    kept = stores / row["instance_id"]
    tree.parent.mkdir(parents=True, exist_ok=True)
    checkout(mirror_root / f"{owner}+{name}" / "repo", tree, row["base_commit"])
    embedded = -1
    with clock() as building:
        settings = Settings(
            knowledge=(KnowledgeRoot("team", str(knowledge)),) if knowledge else (),
            **({"embed_model": "none"} if build_lexical else {}),
        )
        if reuse:
            store = kept
            fill_precedents(tree, store)
        else:
            built = build_repository(tree, settings, store, wait=True)
            embedded = built.index.embedded
    build_seconds = building.wall
    query = row["problem_statement"]
    profile = dataclasses.replace(profile_named(tree, "implementation"), **overrides)
    retriever = open_retriever(tree, Settings(embed_model="none") if lexical else Settings(), store)
    manifest = read_manifest(store)  # the scopes a request that names none reads, as kbc retrieve does
    exclude = excluded(manifest, chosen_scopes(manifest, None, ()))
    if unseen:
        exclude = frozenset(manifest.documents)
    try:
        files: list[str] = []
        with clock() as searching:
            ranking = without(retriever.search(query, profile), exclude)
            for cid, _ in ranking.ranked:
                chunk = ranking.chunks[cid]
                if chunk.kind not in OUTSIDE_KINDS and chunk.path not in files:
                    files.append(chunk.path)
        search_ms = searching.wall * 1000
        slices = {}
        for budget in BUDGETS:
            if hasattr(retriever, "slice_of"):  # one search for every budget
                items = retriever.slice_of(ranking, query, profile, budget).items
            else:
                items = retriever.retrieve(query, profile, budget).items
            slices[str(budget)] = [
                [i.path, i.start_line, i.end_line] for i in items if i.kind not in OUTSIDE_KINDS
            ]
        mode = retriever.mode
    finally:
        retriever.close()
    if keep and not reuse:
        keep_store(store, kept)
    base_ranked, base_filled = baseline(tree, _inventory_paths(store), query)
    return {
        "instance_id": row["instance_id"],
        "repo": row["repo"],
        "gold": sorted(row["gold_files"]),
        "retrieval": mode,
        "build_seconds": round(build_seconds, 1),
        "embedded": embedded,
        "search_ms": round(search_ms, 1),
        "kbc": {"ranked": files[:TOP], "slices": slices},
        "bm25": {
            "ranked": base_ranked[:TOP],
            "slices": {str(b): [[p, 1, sys.maxsize] for p in paths] for b, paths in base_filled.items()},
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--eval", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "eval" / "swebench-dev"
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/kbc-localization"))
    parser.add_argument("--repos", default="", help="comma-separated repository names to run")
    parser.add_argument("--limit", type=int, default=0, help="at most this many instances")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="override a field of the implementation profile (an ablation)",
    )
    parser.add_argument(
        "--constant",
        action="append",
        default=[],
        metavar="MODULE.NAME=VALUE",
        help="set a module constant of kbc for this run (an ablation), e.g. kbc.retrieval.rank.FILE_LIFT=0",
    )
    parser.add_argument("--keep-stores", action="store_true", help="keep each instance's store")
    parser.add_argument(
        "--knowledge",
        type=Path,
        help="index this knowledge root beside every repository (e.g. benchmarks/knowledge)",
    )
    parser.add_argument(
        "--without-knowledge",
        action="store_true",
        help="retrieve as if the stores held no knowledge documents (the ablation)",
    )
    parser.add_argument("--reuse-stores", action="store_true", help="answer from kept stores")
    parser.add_argument(
        "--lexical",
        action="store_true",
        help="retrieve without vectors (the stores are still built with them)",
    )
    parser.add_argument(
        "--build-lexical", action="store_true", help="build without embeddings (and so retrieve lexically)"
    )
    parser.add_argument("--stores", type=Path, help="where stores are kept (default: WORK/stores)")
    parser.add_argument("--table-only", action="store_true", help="write the table of a finished run")
    parser.add_argument("--update-results", action="store_true")
    args = parser.parse_args()
    overrides = {k: float(v) for k, v in (item.split("=", 1) for item in args.set)}
    set_constants(args.constant)
    mirror_root = Path(os.environ.get("MIRROR_ROOT", ""))
    if not mirror_root.is_dir() and not args.table_only:
        sys.exit("set MIRROR_ROOT to the folder holding owner+name/repo mirrors")
    rows = [json.loads(line) for line in (args.eval / "instances.jsonl").read_text().splitlines() if line]
    hunks = {
        r["instance_id"]: r["hunks"]
        for r in (json.loads(line) for line in (args.eval / "hunks.jsonl").read_text().splitlines() if line)
    }
    wanted = {r.strip() for r in args.repos.split(",") if r.strip()}
    if wanted:
        rows = [r for r in rows if r["repo"].split("/")[1] in wanted]
    if not args.table_only:

        def commit_date(row: Row) -> str:
            owner, name = row["repo"].split("/")
            return git(
                "--git-dir",
                str(mirror_root / f"{owner}+{name}" / "repo"),
                "show",
                "-s",
                "--format=%cI",
                row["base_commit"],
            ).strip()

        rows.sort(key=lambda r: (r["repo"], commit_date(r), r["instance_id"]))
    if args.limit:
        rows = rows[: args.limit]
    args.work.mkdir(parents=True, exist_ok=True)
    log = args.work / "results.jsonl"
    done = (
        {json.loads(line)["instance_id"]: json.loads(line) for line in log.read_text().splitlines()}
        if log.exists()
        else {}
    )
    for index, row in enumerate(rows, start=1):
        if row["instance_id"] in done or args.table_only:
            continue
        result = run_instance(
            row,
            mirror_root,
            args.work,
            overrides,
            args.keep_stores,
            args.reuse_stores,
            args.stores or args.work / "stores",
            args.knowledge.resolve() if args.knowledge else None,
            args.without_knowledge,
            args.lexical or args.build_lexical,
            args.build_lexical,
        )
        done[row["instance_id"]] = result
        with log.open("a") as fh:
            fh.write(json.dumps(result) + "\n")
        got = instance_metrics(result["kbc"], set(result["gold"]), hunks[row["instance_id"]])
        print(
            f"[{index}/{len(rows)}] {row['instance_id']}: kbc acc@5={got['acc@5']:.0f} "
            f"hunk@13k={got['hunk@13000']:.0f} to-gold={got['to_gold']} build {result['build_seconds']}s "
            f"embedded {result['embedded']}",
            flush=True,
        )
    results = [done[r["instance_id"]] for r in rows if r["instance_id"] in done]
    text = table(results, hunks) + "\n\n" + per_repository(results, hunks)
    print(text)
    if args.update_results:
        update_section(
            "localization",
            "Localization on the SWE-bench development split (`benchmarks/localization.py`)",
            text,
            "MIRROR_ROOT=... python benchmarks/localization.py --update-results",
        )


if __name__ == "__main__":
    main()
