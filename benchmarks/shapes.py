"""Retrieval on questions of every shape, against BM25 over whole files in the same run.

    MIRROR_ROOT=DIR python benchmarks/shapes.py run SET [SET ...] --work W [--hybrid]
        [--merge-model FILE | --loro-models DIR] [--constant MODULE.NAME=VALUE] [--limit N]
    python benchmarks/shapes.py table --work W [--label TEXT] [--update-results KEY]

A set is a folder with ``instances.jsonl`` (one question a line: ``instance_id``, ``shape``,
``repo``, ``base_commit``, ``problem_statement``, ``gold_files``, ``hunks``; a knowledge
question also ``knowledge``: a corpus of team notes, ``{"name", "local"}`` inside the set or
``{"name", "repo", "commit", "dir"}`` in a mirrored repository; a SWE-bench-style set keeps its
hunks in ``hunks.jsonl`` and its questions are issue reports). Shapes: ``issue`` (an issue
report; gold: the lines its fix changed), ``howto`` (a how / where / why question; gold: the
definitions that answer), ``knowledge`` (gold: the note's section), ``copies`` (a report in a
repository that keeps copies of its own code; gold: the lines the fix changed in the real
definition).

Each question's repository is checked out at its commit (``MIRROR_ROOT`` holds bare mirrors
named ``owner+name/repo``), built once per commit and corpus (stores kept under
``W/stores``), and asked under the ``implementation`` profile (or the question's
``use_case``). What is recorded per question (``W/results.jsonl``) is raw: the ranking's
items (path, lines, kind, corpus, score, and the merge's features), each budget's slice, the
confidence; and BM25 over whole files (the repository's files and the corpus's notes) with
the same budgets filled in rank order. ``table`` computes, per shape: document Acc@1 / Acc@5
(every gold file or note among the first k distinct documents), HunkAll at 2k / 4k / 8k / 13k
(every gold line inside the slice: for a note, its whole section), line precision at 4k and
13k (the share of the slice's lines that are gold), and for team-note questions whether the
answering note is the first team-knowledge item.

``--loro-models DIR`` reads a merge model per repository (``DIR/<owner+name>.json``, fitted
without that repository's questions by ``benchmarks/fit_merge.py``): every question is then
answered by a model that never saw its repository.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from shape_metrics import (
    calibration_table,
    compare_table,
    floor_table,
    metrics,
    read_results,
    shape_table,
)
from shape_sets import check_out, corpus_root, document_texts, foreign, line_count, load_set, store_key
from timing import clock

Row = dict[str, Any]
BUDGETS = (1_000, 2_000, 3_000, 4_000, 6_000, 8_000, 13_000, 27_000)
RANKED = 300  # ranking items kept per question


def baseline(texts: dict[str, str], query: str) -> tuple[list[str], dict[str, list[str]]]:
    """BM25 over whole documents: the ranked paths, and the paths that fill each budget."""
    from kbc.eval.baseline import WholeFileBM25
    from kbc.index.tokencount import default_counter
    from kbc.index.tokens import path_tokens, tokens

    counter = default_counter()
    with WholeFileBM25(Path("/"), []) as bm25:
        for path in sorted(texts):  # documents given by their text (notes live outside the tree)
            bm25.texts[path] = texts[path]
            bm25.paths.append(path)
            bm25.db.execute(
                "INSERT INTO f (rowid, path, body) VALUES (?, ?, ?)",
                (len(bm25.paths), " ".join(path_tokens(path)), " ".join(tokens(texts[path]))),
            )
        ranked = bm25.rank(query)
        return ranked[:50], {str(b): bm25.fill(ranked, b, counter) for b in BUDGETS}


def _built(member: Row, mirror_root: Path, work: Path, hybrid: bool) -> tuple[Path, Path, float]:
    """One repository of a workspace question checked out and built: (tree, store, seconds)."""
    from kbc.domain.settings import Settings
    from kbc.services.build import build_repository

    owner, name = member["repo"].split("/")
    tree = check_out(
        mirror_root,
        member["repo"],
        member["base_commit"],
        work / "trees" / f"{owner}+{name}@{member['base_commit'][:12]}",
    )
    kept = work / "stores" / store_key(member, hybrid)
    with clock() as built:
        if not (kept / "CURRENT").exists():
            building = work / "building" / f"{owner}+{name}"
            build_repository(
                tree, Settings(**({} if hybrid else {"embed_model": "none"})), building, wait=True
            )
            from localization import keep_store

            keep_store(building, kept)
    return tree, kept, built.wall


def run_workspace(row: Row, mirror_root: Path, work: Path, hybrid: bool) -> Row:
    """A question across the repositories of a workspace, as ``kbc serve --repo A --repo B``
    answers it: the ranking is the order of the items at the largest budget."""
    from kbc.domain.settings import Settings
    from kbc.domain.workspace import RepositoryEntry
    from kbc.services.fused import retrieve_across
    from kbc.services.workspace import Workspace

    entries, stores, seconds = [], {}, 0.0
    for member in row["repos"]:
        tree, kept, took = _built(member, mirror_root, work, hybrid)
        entries.append(RepositoryEntry(member["name"], str(tree), store=str(kept)))
        stores[str(tree.resolve())] = kept
        seconds += took
    mode = {} if hybrid else {"embed_model": "none"}

    def settings_for(root: Path) -> Settings:
        return Settings(store=str(stores[str(Path(root).resolve())]), **mode)

    workspace = Workspace(entries, Settings(**mode), settings_for=settings_for)
    query = row["problem_statement"]
    slices: dict[str, list[list[Any]]] = {}
    confidence = -1.0
    try:
        with clock() as searching:
            for budget in BUDGETS:
                found = retrieve_across(workspace, query, row.get("use_case", "implementation"), budget)
                slices[str(budget)] = [
                    [f"{i['repository']}:{i['path']}", i["start_line"], i["end_line"], i["kind"]]
                    for i in found["items"]
                ]
                confidence = float(found.get("confidence", -1.0))
        search_ms = searching.wall * 1000 / len(BUDGETS)
    finally:
        workspace.close()
    ranking = [[p, s, e, k, "code", 0.0, None, None, None] for p, s, e, k in slices[str(BUDGETS[-1])]]
    texts: dict[str, str] = {}
    for member, entry in zip(row["repos"], entries, strict=True):
        from kbc.store.facts_store import FactsStore

        paths = [f.path for f in FactsStore(Path(entry.store)).inventory().files]
        texts.update(
            {f"{member['name']}:{p}": t for p, t in document_texts(Path(entry.path), paths, None).items()}
        )
    base_ranked, base_filled = baseline(texts, query)
    sizes = {p: line_count(texts[p]) for taken in base_filled.values() for p in taken}
    return {
        "instance_id": row["instance_id"],
        "set": row["set"],
        "shape": row["shape"],
        "repo": row["repo"],
        "gold": sorted(row["gold_files"]),
        "hunks": row["hunks"],
        "retrieval": "hybrid" if hybrid else "lexical",
        "confidence": round(confidence, 4),
        "low_confidence": False,
        "build_seconds": round(seconds, 1),
        "search_ms": round(search_ms, 1),
        "kbc": {"ranking": ranking, "slices": slices},
        "bm25": {"ranked": base_ranked, "slices": base_filled, "lines": sizes},
    }


def run_question(row: Row, mirror_root: Path, work: Path, hybrid: bool, model_for: Any) -> Row:
    from kbc.domain.knowledge_roots import KnowledgeRoot
    from kbc.domain.settings import Settings
    from kbc.retrieval.model import shipped_models
    from kbc.services.build import build_repository
    from kbc.services.retrieve import open_retriever, profile_named
    from kbc.store.facts_store import FactsStore

    owner, name = row["repo"].split("/")
    if row.get("path"):  # a local tree (an unpacked source distribution), as it is
        tree = Path(row["set_dir"]) / row["path"]
    else:
        tree = check_out(mirror_root, row["repo"], row["base_commit"], work / "trees" / f"{owner}+{name}")
    corpus = corpus_root(row, mirror_root, work)
    knowledge = (KnowledgeRoot(corpus[0], str(corpus[1])),) if corpus else ()
    kept = work / "stores" / store_key(row, hybrid)
    with clock() as built:
        if not (kept / "CURRENT").exists():
            settings = Settings(knowledge=knowledge, **({} if hybrid else {"embed_model": "none"}))
            # One folder per repository, refreshed commit after commit (incremental); a store with a
            # corpus of notes has a folder of its own (a vector store's folder is never deleted
            # under a client that has it open).
            building = (
                work / "building" / (store_key(row, hybrid) if row.get("knowledge") else f"{owner}+{name}")
            )
            build_repository(tree, settings, building, wait=True)
            from localization import keep_store

            keep_store(building, kept)
    build_seconds = built.wall
    retriever = open_retriever(tree, Settings() if hybrid else Settings(embed_model="none"), kept)
    ranker = shipped_models().for_mode(retriever.mode)
    model = model_for(row)
    if model is not None:  # a merge model of its own (fitted without this question's repository)
        object.__setattr__(ranker, "merge", model)
    profile = profile_named(tree, row.get("use_case", "implementation"))
    query = row["problem_statement"]
    try:
        with clock() as searching:
            found = retriever.search(query, profile)
        search_ms = searching.wall * 1000
        rows = {r.id: r for r in getattr(retriever, "last_merge", [])}
        weights = getattr(retriever, "last_weights", {})
        ranking = []
        for cid, score in found.ranked[:RANKED]:
            chunk = found.chunks[cid]
            merge = rows.get(cid)
            ranking.append(
                [
                    chunk.path,
                    chunk.start_line,
                    chunk.end_line,
                    chunk.kind,
                    _corpus(chunk),
                    round(score, 6),
                    [None if f != f else round(f, 5) for f in merge.features] if merge else None,
                    merge.rank if merge else None,
                    weights.get(cid),
                ]
            )
        slices = {}
        for budget in BUDGETS:
            packed = retriever.slice_of(found, query, profile, budget, min_confidence=0.0)  # the ranking's
            slices[str(budget)] = [[i.path, i.start_line, i.end_line, i.kind] for i in packed.items]
        mode = retriever.mode
        confidence, low = found.evidence.confidence, found.evidence.low_confidence
        floor = getattr(found.evidence, "floor", -1.0)
        confidence_row = [None if f != f else round(f, 5) for f in getattr(retriever, "last_confidence", [])]
    finally:
        retriever.close()
    paths = [f.path for f in FactsStore(kept).inventory().files]
    paths += [p for p, *_ in ranking if p.startswith("@knowledge/")]
    if corpus is not None:
        paths += [
            f"@knowledge/{corpus[0]}/{p.relative_to(corpus[1])}" for p in sorted(corpus[1].rglob("*.md"))
        ]
    texts = document_texts(tree, sorted(set(paths)), corpus)
    base_ranked, base_filled = baseline(texts, query)
    sizes = {p: line_count(texts[p]) for p in set(base_ranked) | set(row["gold_files"]) if p in texts}
    for taken in base_filled.values():
        sizes.update({p: line_count(texts[p]) for p in taken if p not in sizes})
    return {
        "instance_id": row["instance_id"],
        "set": row["set"],
        "shape": row["shape"],
        "repo": row["repo"],
        "gold": sorted(row["gold_files"]),
        "hunks": row["hunks"],
        "retrieval": mode,
        "confidence": round(confidence, 4),
        "low_confidence": low,
        "floor": floor,
        "confidence_row": confidence_row,
        "copy_paths": row.get("copy_paths", []),
        "build_seconds": round(build_seconds, 1),
        "search_ms": round(search_ms, 1),
        "kbc": {"ranking": ranking, "slices": slices},
        "bm25": {"ranked": base_ranked, "slices": base_filled, "lines": sizes},
    }


def _corpus(chunk: Any) -> str:
    try:
        from kbc.retrieval.corpora import corpus_of
    except ImportError:  # a kbc from before the corpora were merged
        return {"knowledge": "knowledge", "view": "views"}.get(chunk.kind) or (
            {"test": "tests", "doc": "docs"}.get(chunk.role, "code")
        )
    return corpus_of(chunk)


def run(args: argparse.Namespace) -> None:
    from common import set_constants

    set_constants(args.constant)
    mirror_root = Path(os.environ.get("MIRROR_ROOT", "/work/.mirror"))
    rows = [row for folder in args.sets for row in load_set(folder)]
    if args.knowledge:  # a corpus of team notes beside every question that has none
        name, _, path = args.knowledge.partition("=")
        for row in rows:
            row.setdefault("knowledge", {"name": name, "local": str(Path(path).resolve())})
    if args.foreign:
        rows = foreign(rows)
    if args.limit:
        rows = rows[: args.limit]
    model_for = _models(args)
    args.work.mkdir(parents=True, exist_ok=True)
    done = {r["instance_id"] for r in read_results(args.work)}
    log = args.work / "results.jsonl"
    rows.sort(key=lambda r: (r["repo"], store_key(r, args.hybrid), r["instance_id"]))
    for index, row in enumerate(rows, start=1):
        if row["instance_id"] in done:
            continue
        try:
            if row["shape"] == "workspace":
                result = run_workspace(row, mirror_root, args.work, args.hybrid)
            else:
                result = run_question(row, mirror_root, args.work, args.hybrid, model_for)
        except Exception as exc:  # one broken question is reported, the rest go on
            print(
                f"[{index}/{len(rows)}] {row['instance_id']}: FAILED {type(exc).__name__}: {exc}", flush=True
            )
            continue
        with log.open("a") as fh:
            fh.write(json.dumps(result) + "\n")
        got = metrics(result)["kbc"]
        print(
            f"[{index}/{len(rows)}] {row['instance_id']} ({row['shape']}): acc@1={got['acc@1']:.0f} "
            f"acc@5={got['acc@5']:.0f} hunk@4k={got['hunk@4000']:.0f} hunk@13k={got['hunk@13000']:.0f} "
            f"conf={result['confidence']:.2f} build {result['build_seconds']}s",
            flush=True,
        )


def _models(args: argparse.Namespace) -> Any:
    def read(path: Path) -> Any:
        from kbc.retrieval.features import MERGE_FEATURES
        from kbc.retrieval.model import Linear

        return Linear.from_data(json.loads(path.read_text()), MERGE_FEATURES)

    if args.merge_model:
        single = read(args.merge_model)
        return lambda row: single
    if args.loro_models:
        folder = args.loro_models

        def per_repository(row: Row) -> Any:
            path = folder / f"{row['repo'].replace('/', '+')}.json"
            if not path.exists():
                raise SystemExit(f"no model fitted without {row['repo']} in {folder}")
            return read(path)

        return per_repository
    return lambda row: None


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    sub = parser.add_subparsers(dest="action", required=True)
    running = sub.add_parser("run")
    running.add_argument("sets", nargs="+", type=Path)
    running.add_argument("--work", type=Path, required=True)
    running.add_argument("--hybrid", action="store_true", help="build with vectors and retrieve hybrid")
    running.add_argument("--merge-model", type=Path)
    running.add_argument("--loro-models", type=Path)
    running.add_argument("--constant", action="append", default=[])
    running.add_argument("--limit", type=int, default=0)
    running.add_argument("--foreign", action="store_true", help="ask each question of another repository")
    running.add_argument("--knowledge", help="NAME=PATH: a corpus of notes beside every question")
    tabling = sub.add_parser("table")
    tabling.add_argument("--work", type=Path, required=True, action="append")
    comparing = sub.add_parser("compare", help="one row per run: LABEL=WORK[,WORK...]")
    comparing.add_argument("runs", nargs="+")
    args = parser.parse_args()
    if args.action == "run":
        run(args)
    elif args.action == "compare":
        runs = []
        for spec in args.runs:
            label, _, works = spec.partition("=")
            runs.append((label, [r for w in works.split(",") for r in read_results(Path(w))]))
        print(compare_table(runs))
    else:
        results = [r for work in args.work for r in read_results(work)]
        print(shape_table(results))
        print()
        print(calibration_table(results))
        print()
        print(floor_table(results))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    main()
