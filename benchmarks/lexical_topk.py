"""Issue-length queries on 100,000 units: the lexical search before and after, in one run.

    python benchmarks/lexical_topk.py --store DIR [--store DIR ...] --before CODE
        [--units 100000] [--queries 12] [--rounds 3] [--work DIR] [--update-results]

The chunks of the stores (in order, until ``--units``; each store's paths under its own name)
make one lexical index. The queries are the development split's issues read as the index reads
them, 150 distinct terms each (an issue with fewer is continued by the next). The code of CODE
(a checkout to compare with, e.g. ``git worktree add CODE main``) and this code each measure,
in a process of their own and in turn round after round, the CPU time of: FTS5's OR query
(what a one-shot ``kbc retrieve`` runs), a remembering reader (``kbc serve``) reading each
query's terms for the first time, and the same reader asked the query again (every term's
scores in memory: the search proper); then the update after one file changed (its rows
rewritten and committed) and a query after it. Every answer of both codes is compared: the
same ids and scores, or the run stops.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from results_file import report
from timing import Load, clock, interleaved

TERMS = 150
LIMIT = 210  # what retrieval asks of the lexical search (its pool and team knowledge's)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--store", type=Path, action="append", default=[])
    parser.add_argument("--before", type=Path, help="a checkout of the code to compare with")
    parser.add_argument("--units", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", type=Path, help="where the index is written (default: a temporary folder)")
    parser.add_argument(
        "--eval", type=Path, default=Path(__file__).resolve().parents[2] / "shared/eval/swebench-dev"
    )
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--update-results", action="store_true")
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(measure(args.child, json.loads(sys.stdin.read()))))
        return
    if not args.store or args.before is None:
        parser.error("give --store (one or more) and --before")
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        index = Path(tmp) / "lexical.sqlite"
        units = combined(args.store, args.units, index)
        queries = issue_queries(args.eval, args.queries)
        compare(args, index, units, queries)


def combined(stores: list[Path], units: int, target: Path) -> int:
    """One index of the stores' chunks, at most ``units`` of them."""
    from kbc.index.lexical import LexicalIndex

    index = LexicalIndex(target)
    written = 0
    for store in stores:
        source = LexicalIndex(store / "index" / "lexical.sqlite")
        chunks = source.all_chunks()[: units - written]
        source.close()
        name = store.name if store.name != ".kbc" else store.parent.name
        index.replace_files(
            [], [dataclasses.replace(c, id=f"{name}:{c.id}", path=f"{name}/{c.path}") for c in chunks], []
        )
        written += len(chunks)
        if written >= units:
            break
    index.commit()
    index.close()
    return written


def issue_queries(split: Path, count: int) -> list[str]:
    from kbc.index.lexical import query_terms

    queries: list[str] = []
    terms: list[str] = []
    for line in (split / "instances.jsonl").read_text().splitlines():
        terms = list(
            dict.fromkeys(terms + [t[1:-1] for t in query_terms(json.loads(line)["problem_statement"])])
        )
        if len(terms) >= TERMS:
            queries.append(" ".join(terms[:TERMS]))
            terms = []
    return queries[:count]


def measure(index: Path, queries: list[str]) -> dict[str, object]:
    """CPU ms of each way of searching, and a digest of every answer."""
    from kbc.index.lexical import LexicalIndex

    def timed(call: Callable[[], object]) -> tuple[float, str]:
        with clock() as sample:
            found = call()
        return sample.cpu * 1000, hashlib.sha256(json.dumps(found).encode()).hexdigest()

    plain = LexicalIndex(index)
    plain.pin()
    remembering = LexicalIndex(index)
    remembering.remember()
    out: dict[str, list[float]] = {"fts5": [], "first": [], "again": []}
    digests: list[str] = []
    for query in queries:
        for way, reader in (("fts5", plain), ("first", remembering), ("again", remembering)):
            used, digest = timed(lambda reader=reader, query=query: reader.search(query, LIMIT))
            out[way].append(used)
            digests.append(digest)
    plain.close()
    remembering.close()
    with tempfile.TemporaryDirectory() as tmp:  # the update, on a copy: every round starts alike
        copy = Path(tmp) / "lexical.sqlite"
        LexicalIndex(index).copy_to(copy)
        writer = LexicalIndex(copy)
        writer.remember()
        writer.search(queries[0], LIMIT)
        path = writer.locations()[len(writer.locations()) // 2][1]
        chunks = [
            dataclasses.replace(c, text=c.text + "\nedited") for c in writer.all_chunks() if c.path == path
        ]
        with clock() as updating:
            writer.replace_files([path], chunks, [])
            writer.commit()
        update = updating.cpu * 1000
        after, digest = timed(lambda: writer.search(queries[0], LIMIT))
        fresh = LexicalIndex(copy)
        same = fresh.search(queries[0], LIMIT) == writer.search(queries[0], LIMIT)
        writer.close()
        fresh.close()
    return {
        **out,
        "digests": digests,
        "update": update,
        "after_update": after,
        "update_same": same,
        "file": path,
    }


def compare(args: argparse.Namespace, index: Path, units: int, queries: list[str]) -> None:
    here = Path(__file__).resolve().parents[1]
    runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}

    def child(name: str, code: Path) -> Callable[[], None]:
        """A process of the code at ``code`` measuring every way; its CPU figures kept."""

        def run() -> None:
            env = {**os.environ, "PYTHONPATH": f"{code}{os.pathsep}{Path(__file__).parent}"}
            done = subprocess.run(
                [sys.executable, __file__, "--child", str(index)],
                input=json.dumps(queries),
                env=env,
                check=True,
                capture_output=True,
                text=True,
            )
            runs[name].append(json.loads(done.stdout))

        return run

    # The figures are the children's own CPU times; the rounds give their order and the load.
    load = Load()
    interleaved(
        {"before": child("before", args.before.resolve()), "after": child("after", here)}, args.rounds, load
    )
    answers = {tuple(run["digests"]) for name in runs for run in runs[name]}
    ways = len(answers) == 1 and all(
        len(set(d[n : n + 3])) == 1 for d in answers for n in range(0, len(d), 3)
    )
    if not ways:
        raise SystemExit("the answers differ between the codes, the rounds or the ways of searching")

    def median(name: str, way: str) -> float:
        return statistics.median(v for run in runs[name] for v in run[way])

    def single(name: str, key: str) -> float:
        return statistics.median(float(run[key]) for run in runs[name])

    names = ", ".join(s.name if s.name != ".kbc" else s.parent.name for s in args.store)
    lines = [
        f"{units:,} units (the chunks of {names}); "
        f"{len(queries)} queries of {TERMS} distinct terms (the development split's issues), top {LIMIT}; "
        f"{args.rounds} rounds, the code before and this code in turn, each in a process of its own; "
        "every answer the same (ids and scores) in both. CPU time, median.",
        "",
        "| search | before | after | after ÷ before |",
        "| --- | ---: | ---: | ---: |",
    ]
    for way, title in (
        ("fts5", "FTS5's OR query (a one-shot `kbc retrieve`)"),
        ("first", "remembering reader, the query's terms read for the first time"),
        ("again", "remembering reader, every term's scores in memory"),
    ):
        before, after = median("before", way), median("after", way)
        lines.append(f"| {title} | {before:.2f} ms | {after:.2f} ms | {after / before:.2f}× |")
    for key, title in (
        ("update", "update after one file changed (its rows rewritten, committed)"),
        ("after_update", "the first query after it (terms read again)"),
    ):
        before, after = single("before", key), single("after", key)
        lines.append(f"| {title} | {before:.2f} ms | {after:.2f} ms | {after / before:.2f}× |")
    consistent = all(run["update_same"] for name in runs for run in runs[name])
    lines += [
        "",
        f"After the update the remembering reader answers as a fresh one: {consistent} "
        f"(file `{runs['after'][0]['file']}`).",
    ]
    report(
        "\n".join(lines),
        args.update_results,
        "lexical-topk",
        "Issue-length queries on 100,000 units, before and after (`benchmarks/lexical_topk.py`)",
        "python benchmarks/lexical_topk.py --store DIR [--store DIR ...] --before CODE --update-results",
        load,
    )


if __name__ == "__main__":
    main()
