"""The embedding pass against raw fastembed, and retrieve latency, in one run.

    python benchmarks/index_speed.py --repo PATH [--store DIR] [--units 600] [--queries 40]
        [--update-results]

1. Embedding pass: kbc's vector sync (units from the chunk table, embedding,
   Chroma upserts with metadata, the exact-search snapshot read back and
   written) into a fresh collection, against fastembed's
   ``TextEmbedding.embed`` alone on the very same unit texts with the same
   batch size. Interleaved, best of ``--repeat``.
2. ``kbc retrieve`` latency: warm (one process, the retriever opened once)
   p50 and p95 over queries made from the repository's own docstrings, and
   cold (a new ``kbc retrieve`` process each time) median.

The repository must have been built (``kbc build``) with embeddings.
"""

from __future__ import annotations

import random
import re
import shutil
import statistics
import subprocess
import tempfile
from functools import partial
from pathlib import Path

from common import store_parser
from results_file import report
from timing import Load, best, interleaved, timed

from kbc.domain.settings import Settings
from kbc.index.build import _sync_vectors
from kbc.index.embed import BATCH_SIZE, load_embedder, model_name
from kbc.index.lexical import LexicalIndex
from kbc.index.units import units_of
from kbc.index.vectors import open_vector_store
from kbc.services.retrieve import open_retriever, profile_named
from kbc.store.layout import store_path


class _Subset(LexicalIndex):
    """The chunk table limited to the chunks whose units are measured."""

    def __init__(self, path: Path, keep: set[str]) -> None:
        super().__init__(path)
        self._keep = keep

    def all_chunks(self):  # type: ignore[no-untyped-def]
        return [c for c in super().all_chunks() if c.id in self._keep]


def main() -> None:
    parser = store_parser(__doc__)
    parser.add_argument("--units", type=int, default=600)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    repo = args.repo.resolve()
    store = store_path(repo, Settings(), args.store)
    embedder = load_embedder(model_name())
    lexical = LexicalIndex(store / "index" / "lexical.sqlite")
    chunks = lexical.all_chunks()
    lexical.close()
    rng = random.Random(7)
    rng.shuffle(chunks)
    picked, count = [], 0
    for chunk in chunks:
        units = units_of([chunk], embedder.model_id)
        picked.append(chunk)
        count += len(units)
        if count >= args.units:
            break
    keep = {c.id for c in picked}
    texts = [u.text for u in units_of(picked, embedder.model_id)]
    raw_model = embedder.model  # type: ignore[attr-defined]

    with tempfile.TemporaryDirectory() as tmp:
        # Each round's kbc pass writes into a fresh collection, opened before the rounds so
        # that opening it is not timed.
        fresh = []
        for number in range(args.repeat):
            folder = Path(tmp) / f"round-{number}"
            folder.mkdir()
            vectors = open_vector_store(folder, f"bench-{number}", embedder)
            fresh.append((folder, vectors, _Subset(store / "index" / "lexical.sqlite", keep)))
        rounds = iter(fresh)

        def run_kbc() -> None:
            folder, vectors, subset = next(rounds)
            _sync_vectors(subset, embedder, vectors, folder, embed_tests=True)

        load = Load()
        samples = interleaved(
            {"raw": lambda: list(raw_model.embed(texts, batch_size=BATCH_SIZE)), "kbc": run_kbc},
            args.repeat,
            load,
        )
        for _, _, subset in fresh:
            subset.close()
    raw_best, kbc_best = best(samples["raw"]), best(samples["kbc"])
    ratio = kbc_best / raw_best

    retriever = open_retriever(repo, Settings(), args.store)
    profile = profile_named(repo, "implementation")
    docs = [re.sub(r"\s+", " ", c.text)[:200] for c in chunks if '"""' in c.text][: args.queries * 3]
    rng.shuffle(docs)
    queries = docs[: args.queries] or ["where is the configuration loaded"]
    retriever.retrieve(queries[0], profile)  # load the model and caches
    warm = [timed(partial(retriever.retrieve, query, profile)).wall * 1000 for query in queries]
    retriever.close()
    warm.sort()
    p50, p95 = statistics.median(warm), warm[int(0.95 * (len(warm) - 1))]
    kbc = shutil.which("kbc") or "kbc"
    cold = []
    for query in queries[:5]:
        store_args = ["--store", str(args.store)] if args.store else []
        command = [kbc, "retrieve", "--repo", str(repo), *store_args, "--", query]
        cold.append(timed(partial(subprocess.run, command, check=True, capture_output=True)).wall)

    text = "\n".join(
        [
            f"Repository: {args.name or repo.name}, {len(chunks)} chunks; "
            f"{len(texts)} units embedded per run; "
            f"batch {BATCH_SIZE}; best of {args.repeat}, interleaved.",
            "",
            "| measure | value |",
            "| --- | ---: |",
            f"| raw fastembed `embed` on the units | {raw_best:.2f} s "
            f"({len(texts) / raw_best:.1f} units/s) |",
            f"| kbc embedding pass (units, embed, Chroma upsert, snapshot) | {kbc_best:.2f} s |",
            f"| **ratio kbc / raw** | **{ratio:.3f}×** (target ≤ 1.1×) |",
            f"| warm `retrieve` p50 / p95 ({len(warm)} queries, implementation profile) | "
            f"{p50:.1f} ms / {p95:.1f} ms |",
            f"| cold `kbc retrieve` process, median of {len(cold)} | {statistics.median(cold):.2f} s |",
        ]
    )
    report(
        text,
        args.update_results,
        "index-speed",
        "Embedding pass and retrieve latency (`benchmarks/index_speed.py`)",
        "python benchmarks/index_speed.py --repo PATH --update-results",
        load,
    )


if __name__ == "__main__":
    main()
