"""Exact vector search against Chroma's HNSW query, on a built store, in one run.

    python benchmarks/vector_search.py --repo PATH [--store DIR] [--queries 40] [--limit 300]
        [--processes 8] [--update-results]

For queries made from the repository's own docstrings (embedded with the
store's model):

- latency: kbc's exact search over the snapshot against ``collection.query``
  for the same ``limit`` neighbours, ids and distances only (the cheapest
  query Chroma offers), p50 of each and their ratio;
- recall of HNSW: the share of the exact top ``limit`` that HNSW returns;
- stability: every query run again in ``--processes`` fresh processes, and
  how many queries got more than one answer, and the most answers one query
  got (exact search gives one by construction; it is run the same way to
  show it).

The store must have been built with embeddings by this version of kbc (the
snapshot is written by the index pass).
"""

from __future__ import annotations

import json
import os
import random
import re
import statistics
import subprocess
import sys

from common import store_parser
from results_file import report
from timing import Load, interleaved, median

from kbc.domain.settings import Settings
from kbc.index.exact import load_snapshot
from kbc.index.lexical import LexicalIndex
from kbc.services.components import Components
from kbc.store.layout import store_path

CHILD = """
import json, sys
from pathlib import Path
from kbc.domain.settings import Settings
from kbc.index.exact import load_snapshot
from kbc.services.components import Components
store, repo, mode, digest = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[5]
limit = int(sys.argv[4])
queries = json.loads(sys.stdin.read())
embedder, vectors, _ = Components().open_embedding(store, repo, Settings())
if mode == "hnsw":
    result = vectors._collection.query(query_embeddings=queries, n_results=limit, include=["distances"])
    print(json.dumps(result["ids"]))
else:
    snapshot = load_snapshot(store / "index", digest)
    print(json.dumps([[h.unit for h in snapshot.search(v, limit)] for v in queries]))
"""


def main() -> None:
    parser = store_parser(__doc__)
    parser.add_argument("--limit", type=int, default=300)
    parser.add_argument("--processes", type=int, default=8)
    args = parser.parse_args()

    store = store_path(args.repo, Settings(), args.store)
    lexical = LexicalIndex(store / "index" / "lexical.sqlite")
    digest = lexical.meta("vectors")
    chunks = lexical.all_chunks()
    lexical.close()
    snapshot = load_snapshot(store / "index", digest)
    if snapshot is None:
        sys.exit("no vector snapshot in the store: build it with embeddings first")
    embedder, vectors, note = Components().open_embedding(store, args.repo, Settings())
    if embedder is None or vectors is None:
        sys.exit(f"no embeddings: {note}")
    collection = vectors._collection  # type: ignore[attr-defined]
    rng = random.Random(7)
    docs = [re.sub(r"\s+", " ", c.text)[:200] for c in chunks if '"""' in c.text]
    rng.shuffle(docs)
    queries = docs[: args.queries]
    embedded = embedder.embed(queries)
    snapshot.search(embedded[0], args.limit)  # page the matrix in
    collection.query(query_embeddings=[embedded[0]], n_results=args.limit, include=["distances"])

    # One round per query: both searches answer it, in an order rotated from round to round.
    exact_found: list[list[str]] = []
    hnsw_found: list[list[str]] = []
    exact_next, hnsw_next = iter(embedded), iter(embedded)

    def run_exact() -> None:
        exact_found.append([h.unit for h in snapshot.search(next(exact_next), args.limit)])

    def run_hnsw() -> None:
        found = collection.query(
            query_embeddings=[next(hnsw_next)], n_results=args.limit, include=["distances"]
        )
        hnsw_found.append(found["ids"][0])

    load = Load()
    samples = interleaved({"exact": run_exact, "hnsw": run_hnsw}, len(embedded), load)
    recalls = [len(set(e) & set(h)) / len(e) for e, h in zip(exact_found, hnsw_found, strict=True)]

    answers: dict[str, list[set[str]]] = {"hnsw": [set() for _ in queries], "exact": [set() for _ in queries]}
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    for mode, seen in answers.items():
        for _ in range(args.processes):
            run = subprocess.run(
                [sys.executable, "-c", CHILD, str(store), str(args.repo), mode, str(args.limit), digest],
                input=json.dumps(embedded),
                capture_output=True,
                text=True,
                check=True,
                env=env,
            )
            for index, ids in enumerate(json.loads(run.stdout)):
                seen[index].add(json.dumps(ids))
    unstable = {mode: sum(1 for s in seen if len(s) > 1) for mode, seen in answers.items()}
    most = {mode: max(len(s) for s in seen) for mode, seen in answers.items()}

    exact_p50, hnsw_p50 = median(samples["exact"]) * 1000, median(samples["hnsw"]) * 1000
    text = "\n".join(
        [
            f"Repository: {args.name or args.repo.name}, {len(snapshot.units)} embedded units; "
            f"{len(queries)} queries from its docstrings; {args.limit} neighbours each.",
            "",
            "| measure | exact (kbc) | Chroma HNSW |",
            "| --- | ---: | ---: |",
            f"| query p50 | {exact_p50:.2f} ms | {hnsw_p50:.2f} ms |",
            f"| ratio exact / HNSW | {exact_p50 / hnsw_p50:.2f}× | |",
            f"| recall of the exact top {args.limit}, mean / worst | 1.000 / 1.000 | "
            f"{statistics.mean(recalls):.4f} / {min(recalls):.4f} |",
            f"| queries answered differently across {args.processes} fresh processes | "
            f"{unstable['exact']} of {len(queries)} | {unstable['hnsw']} of {len(queries)} |",
            f"| most different answers to one query | {most['exact']} | {most['hnsw']} |",
        ]
    )
    report(
        text,
        args.update_results,
        "vector-search",
        "Exact vector search against Chroma's HNSW (`benchmarks/vector_search.py`)",
        "python benchmarks/vector_search.py --repo PATH [--store DIR] [--name NAME] --update-results",
        load,
    )


if __name__ == "__main__":
    main()
