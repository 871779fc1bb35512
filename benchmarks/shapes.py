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
import statistics
import sys
import time
from pathlib import Path
from typing import Any

Row = dict[str, Any]
BUDGETS = (1_000, 2_000, 3_000, 4_000, 6_000, 8_000, 13_000, 27_000)
HUNK_BUDGETS = (2_000, 4_000, 8_000, 13_000)
PRECISION_BUDGETS = (4_000, 13_000)
RANKED = 300  # ranking items kept per question
SHAPES = ("issue", "howto", "knowledge", "copies", "workspace")


def load_set(folder: Path) -> list[Row]:
    rows = [
        json.loads(line) for line in (folder / "instances.jsonl").read_text().splitlines() if line.strip()
    ]
    hunks_file = folder / "hunks.jsonl"
    if hunks_file.exists():
        hunks = {
            r["instance_id"]: r["hunks"]
            for r in (json.loads(line) for line in hunks_file.read_text().splitlines() if line.strip())
        }
        for row in rows:
            row.setdefault("hunks", hunks.get(row["instance_id"], {}))
    for row in rows:
        row.setdefault("shape", "issue")
        row["set"] = folder.name
        row["set_dir"] = str(folder.resolve())
    return rows


def _checkout(mirror_root: Path, repo: str, commit: str, tree: Path) -> Path:
    from localization import checkout

    owner, name = repo.split("/")
    tree.parent.mkdir(parents=True, exist_ok=True)
    checkout(mirror_root / f"{owner}+{name}" / "repo", tree, commit)
    return tree


def corpus_root(row: Row, mirror_root: Path, work: Path) -> tuple[str, Path] | None:
    """The question's team-note corpus: (name, folder), checked out when it lives in a mirror."""
    known = row.get("knowledge")
    if not known:
        return None
    if "local" in known:
        return known["name"], Path(row["set_dir"]) / known["local"]
    tree = work / "corpora" / f"{known['repo'].replace('/', '+')}@{known['commit'][:12]}"
    if not tree.exists():
        _checkout(mirror_root, known["repo"], known["commit"], tree)
    return known["name"], tree / known.get("dir", "")


def store_key(row: Row, hybrid: bool) -> str:
    key = f"{row['repo'].replace('/', '+')}@{row['base_commit'][:12]}"
    if row.get("knowledge"):
        key += f"+{row['knowledge']['name']}"
    return key + ("-hybrid" if hybrid else "")


def _lines(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def document_texts(tree: Path, paths: list[str], corpus: tuple[str, Path] | None) -> dict[str, str]:
    """Every repository file and note, by its path in the index."""
    from kbc.domain.models import KNOWLEDGE_PREFIX

    texts = {}
    for path in paths:
        if path.startswith(KNOWLEDGE_PREFIX):
            if corpus is None:
                continue
            name, root = corpus
            inner = path[len(KNOWLEDGE_PREFIX) + len(name) + 1 :]
            target = root / inner
        else:
            target = tree / path
        try:
            texts[path] = target.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return texts


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
    tree = _checkout(
        mirror_root,
        member["repo"],
        member["base_commit"],
        work / "trees" / f"{owner}+{name}@{member['base_commit'][:12]}",
    )
    kept = work / "stores" / store_key(member, hybrid)
    started = time.perf_counter()
    if not (kept / "CURRENT").exists():
        building = work / "building" / f"{owner}+{name}"
        build_repository(tree, Settings(**({} if hybrid else {"embed_model": "none"})), building, wait=True)
        from localization import keep_store

        keep_store(building, kept)
    return tree, kept, time.perf_counter() - started


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
        started = time.perf_counter()
        for budget in BUDGETS:
            found = retrieve_across(workspace, query, row.get("use_case", "implementation"), budget)
            slices[str(budget)] = [
                [f"{i['repository']}:{i['path']}", i["start_line"], i["end_line"], i["kind"]]
                for i in found["items"]
            ]
            confidence = float(found.get("confidence", -1.0))
        search_ms = (time.perf_counter() - started) * 1000 / len(BUDGETS)
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
    sizes = {p: _lines(texts[p]) for taken in base_filled.values() for p in taken}
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
        tree = _checkout(mirror_root, row["repo"], row["base_commit"], work / "trees" / f"{owner}+{name}")
    corpus = corpus_root(row, mirror_root, work)
    knowledge = (KnowledgeRoot(corpus[0], str(corpus[1])),) if corpus else ()
    kept = work / "stores" / store_key(row, hybrid)
    started = time.perf_counter()
    if not (kept / "CURRENT").exists():
        settings = Settings(knowledge=knowledge, **({} if hybrid else {"embed_model": "none"}))
        # One folder per repository, refreshed commit after commit (incremental); a store with a
        # corpus of notes has a folder of its own (a vector store's folder is never deleted
        # under a client that has it open).
        building = work / "building" / (store_key(row, hybrid) if row.get("knowledge") else f"{owner}+{name}")
        build_repository(tree, settings, building, wait=True)
        from localization import keep_store

        keep_store(building, kept)
    build_seconds = time.perf_counter() - started
    retriever = open_retriever(tree, Settings() if hybrid else Settings(embed_model="none"), kept)
    ranker = shipped_models().for_mode(retriever.mode)
    model = model_for(row)
    if model is not None:  # a merge model of its own (fitted without this question's repository)
        object.__setattr__(ranker, "merge", model)
    profile = profile_named(tree, row.get("use_case", "implementation"))
    query = row["problem_statement"]
    try:
        started = time.perf_counter()
        found = retriever.search(query, profile)
        search_ms = (time.perf_counter() - started) * 1000
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
    sizes = {p: _lines(texts[p]) for p in set(base_ranked) | set(row["gold_files"]) if p in texts}
    for taken in base_filled.values():
        sizes.update({p: _lines(texts[p]) for p in taken if p not in sizes})
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


# -- metrics -----------------------------------------------------------------------------


def _covers(ranges: list[tuple[int, int]], first: int, last: int) -> bool:
    line = first
    for start, end in sorted(ranges):
        if start <= line <= end:
            line = end + 1
        if line > last:
            return True
    return line > last


def holds(slice_: dict[str, list[tuple[int, int]]], hunks: dict[str, list[list[int]]]) -> bool:
    return all(_covers(slice_.get(p, []), a, b) for p, spans in hunks.items() for a, b in spans)


def _gold_lines(hunks: dict[str, list[list[int]]]) -> dict[str, set[int]]:
    return {p: {n for a, b in spans for n in range(a, b + 1)} for p, spans in hunks.items()}


def metrics(result: Row) -> dict[str, dict[str, float]]:
    """Per system: acc@1, acc@5, hunk@B, precision@B, first_knowledge, first_right."""
    gold = set(result["gold"])
    hunks = result["hunks"]
    lines = _gold_lines(hunks)
    out: dict[str, dict[str, float]] = {}
    ranking = result["kbc"]["ranking"]
    documents = list(dict.fromkeys(item[0] for item in ranking if item[3] != "view"))
    kbc: dict[str, float] = {f"acc@{k}": float(gold <= set(documents[:k])) for k in (1, 5)}
    kbc["first_right"] = float(bool(documents) and documents[0] in gold)
    knowledge = [item for item in ranking if item[3] == "knowledge"]
    if result["shape"] == "knowledge":
        kbc["first_knowledge"] = float(bool(knowledge) and knowledge[0][0] in gold)
        kbc["first_section"] = float(
            bool(knowledge)
            and any(knowledge[0][1] <= b and knowledge[0][2] >= a for a, b in hunks.get(knowledge[0][0], []))
        )
    if result.get("copy_paths"):
        kbc["real_first"] = _before(documents, gold, set(result["copy_paths"]))
    if result["shape"] == "workspace":
        kbc["both"] = _both(gold, [item[0] for item in result["kbc"]["slices"]["8000"]])
    for budget, items in result["kbc"]["slices"].items():
        spans: dict[str, list[tuple[int, int]]] = {}
        for path, start, end, _ in items:
            spans.setdefault(path, []).append((start, end))
        kbc[f"hunk@{budget}"] = float(holds(spans, hunks))
        total = sum(end - start + 1 for _, start, end, _ in items)
        held = sum(len(lines.get(p, set()) & set(range(s, e + 1))) for p, s, e, _ in items)
        kbc[f"precision@{budget}"] = held / total if total else 0.0
    out["kbc"] = kbc
    base = result["bm25"]
    ranked = base["ranked"]
    bm25 = {f"acc@{k}": float(gold <= set(ranked[:k])) for k in (1, 5)}
    bm25["first_right"] = float(bool(ranked) and ranked[0] in gold)
    notes = [p for p in ranked if p.startswith("@knowledge/")]
    if result["shape"] == "knowledge":
        bm25["first_knowledge"] = float(bool(notes) and notes[0] in gold)
    for budget, taken in base["slices"].items():
        whole = {p: [(1, 10**9)] for p in taken}
        bm25[f"hunk@{budget}"] = float(holds(whole, hunks))
        total = sum(base["lines"].get(p, 0) for p in taken)
        held = sum(len(lines.get(p, set())) for p in taken)
        bm25[f"precision@{budget}"] = held / total if total else 0.0
    if result.get("copy_paths"):
        bm25["real_first"] = _before(ranked, gold, set(result["copy_paths"]))
    if result["shape"] == "workspace":
        bm25["both"] = _both(gold, base["slices"]["8000"])
    out["bm25"] = bm25
    return out


def _both(gold: set[str], packed: list[str]) -> float:
    """1 when the slice holds a gold file of every repository the answer spans."""
    return float({g.split(":", 1)[0] for g in gold} <= {p.split(":", 1)[0] for p in packed if p in gold})


def _before(documents: list[str], gold: set[str], copies: set[str]) -> float:
    """1 when a gold document is ranked before every copy of it (and is ranked at all)."""
    first_gold = next((i for i, d in enumerate(documents) if d in gold), None)
    first_copy = next((i for i, d in enumerate(documents) if d in copies), len(documents))
    return float(first_gold is not None and first_gold < first_copy)


def _pct(values: list[float]) -> str:
    return f"{100 * statistics.fmean(values):.1f}%" if values else "–"


def _head() -> list[str]:
    heads = ["Acc@1", "Acc@5"] + [f"HunkAll {b // 1000}k" for b in HUNK_BUDGETS]
    heads += [f"line precision {b // 1000}k" for b in PRECISION_BUDGETS]
    heads += ["note first among notes", "real definition before its copy", "every repository in 8k"]
    return [
        "| shape | n | repositories | system | " + " | ".join(heads) + " |",
        "| --- | ---: | ---: | --- |" + " ---: |" * len(heads),
    ]


def _row(shape: str, chosen: list[Row], title: str, got: list[dict[str, float]]) -> str:
    """One system's figures on one shape's questions."""
    cells = [_pct([g["acc@1"] for g in got]), _pct([g["acc@5"] for g in got])]
    cells += [_pct([g[f"hunk@{b}"] for g in got]) for b in HUNK_BUDGETS]
    cells += [_pct([g[f"precision@{b}"] for g in got]) for b in PRECISION_BUDGETS]
    cells.append(_pct([g["first_knowledge"] for g in got]) if shape == "knowledge" else "")
    cells.append(_pct([g["real_first"] for g in got if "real_first" in g]) if shape == "copies" else "")
    cells.append(_pct([g["both"] for g in got]) if shape == "workspace" else "")
    repos = len({r["repo"] for r in chosen})
    return f"| {shape} | {len(chosen)} | {repos} | {title} | " + " | ".join(cells) + " |"


def compare_table(runs: list[tuple[str, list[Row]]]) -> str:
    """Each shape's figures for each run (labelled), on the questions every run answered, with
    whole-file BM25 from the first run."""
    lines = _head()
    common = set.intersection(*({r["instance_id"] for r in rows} for _, rows in runs))
    for shape in SHAPES:
        systems: list[tuple[str, list[dict[str, float]]]] = []
        chosen: list[Row] = []
        for index, (label, rows) in enumerate(runs):
            chosen = sorted(
                (r for r in rows if r["shape"] == shape and r["instance_id"] in common),
                key=lambda r: r["instance_id"],
            )
            if not chosen:
                break
            scored = [metrics(r) for r in chosen]
            if index == 0:
                systems.append(("BM25 whole files", [m["bm25"] for m in scored]))
            systems.append((label, [m["kbc"] for m in scored]))
        if chosen:
            lines.extend(_row(shape, chosen, title, got) for title, got in systems)
    return "\n".join(lines)


def shape_table(results: list[Row]) -> str:
    lines = _head()
    for shape in SHAPES:
        chosen = [r for r in results if r["shape"] == shape]
        if not chosen:
            continue
        scored = [metrics(r) for r in chosen]
        for system, title in (("kbc", "kbc"), ("bm25", "BM25 whole files")):
            lines.append(_row(shape, chosen, title, [s[system] for s in scored]))
    return "\n".join(lines)


def calibration_table(results: list[Row], bins: int = 5) -> str:
    """Accuracy of the first document in bins of confidence, and the expected calibration error."""
    pairs = [
        (r["confidence"], metrics(r)["kbc"]["first_right"]) for r in results if r.get("confidence", -1) >= 0
    ]
    if not pairs:
        return "No confidence recorded."
    lines = [
        "| confidence | questions | mean confidence | first document right |",
        "| --- | ---: | ---: | ---: |",
    ]
    error = 0.0
    for index in range(bins):
        low, high = index / bins, (index + 1) / bins
        inside = [(c, a) for c, a in pairs if low <= c < high or (index == bins - 1 and c == 1.0)]
        if not inside:
            lines.append(f"| {low:.1f}–{high:.1f} | 0 | – | – |")
            continue
        mean_c = statistics.fmean(c for c, _ in inside)
        mean_a = statistics.fmean(a for _, a in inside)
        error += len(inside) / len(pairs) * abs(mean_c - mean_a)
        lines.append(f"| {low:.1f}–{high:.1f} | {len(inside)} | {mean_c:.2f} | {100 * mean_a:.1f}% |")
    lines.append("")
    lines.append(f"Expected calibration error: **{error:.3f}** over {len(pairs)} questions.")
    return "\n".join(lines)


def floor_table(results: list[Row]) -> str:
    """Per shape, the share of questions whose slice says "nothing relevant" by default (the
    relevance below its floor while the repository misses most of the task's words): for a
    question the repository answers, a slice lost; for a foreign one, a full budget of
    unrelated code not handed over."""
    shapes: dict[str, list[bool]] = {}
    for r in results:
        if r.get("confidence", -1) >= 0:
            shapes.setdefault(r["shape"], []).append(bool(r.get("low_confidence")))
    if not shapes:
        return "No floor recorded."
    lines = ["| shape | questions | nothing relevant |", "| --- | ---: | ---: |"]
    for shape in sorted(shapes):
        said = shapes[shape]
        lines.append(f"| {shape} | {len(said)} | {100 * sum(said) / len(said):.1f}% |")
    return "\n".join(lines)


def foreign(rows: list[Row]) -> list[Row]:
    """Each question asked where nothing answers it (shape ``foreign``, no gold): a team-note
    question of its repository without the notes; any other of another repository's tree (the
    next repository's first question's, in name order)."""
    repos = sorted({r["repo"] for r in rows})
    first = {
        repo: next((r for r in rows if r["repo"] == repo and not r.get("knowledge")), None) for repo in repos
    }
    out = []
    for row in rows:
        if row.get("knowledge"):
            asked = {k: v for k, v in row.items() if k != "knowledge"}
            asked.update(
                instance_id=row["instance_id"] + "~foreign", shape="foreign", gold_files=[], hunks={}
            )
            out.append(asked)
            continue
        other = first[repos[(repos.index(row["repo"]) + 1) % len(repos)]]
        if other is None or other["repo"] == row["repo"]:
            continue
        asked = {k: v for k, v in other.items() if k not in ("instance_id", "problem_statement")}
        asked.update(
            instance_id=row["instance_id"] + "~foreign",
            problem_statement=row["problem_statement"],
            shape="foreign",
            gold_files=[],
            hunks={},
        )
        out.append(asked)
    return out


def read_results(work: Path) -> list[Row]:
    log = work / "results.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()] if log.exists() else []


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
