"""Warm retrieve latency on real issues: a reader that remembers against one that does not.

    python benchmarks/warm_latency.py --repo TREE --store STORE --issues OWNER/NAME
        [--eval DIR] [--rounds 3] [--update-results]

TREE is a checkout at the commit STORE was built from (e.g. a store kept by
``localization.py --keep-stores`` and the tree it checks out); the queries are
that repository's issues in the development split. In one process, interleaved
query by query:

- **asked again**: a retriever as ``kbc retrieve`` opens it (plain) and one whose
  lexical index remembers (``LexicalIndex.remember``, what ``kbc serve`` and
  ``kbc eval`` use), each after one pass over the queries (their embeddings are
  then kept, as for a task asked again);
- **new queries**: a fresh plain retriever and a fresh remembering one that have
  answered the other half of the issues only: every query is new to them (its
  embedding is computed, its terms not seen before are read for the first time).

Every slice is checked byte for byte against the plain retriever's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from datetime import date
from pathlib import Path

from results_file import update_section

from kbc.domain.settings import Settings
from kbc.retrieval.retrieve import Retriever
from kbc.services.retrieve import open_retriever, profile_named


def percentiles(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--issues", required=True, help="the repository's owner/name in the split")
    parser.add_argument(
        "--eval", type=Path, default=Path(__file__).resolve().parents[2] / "shared/eval/swebench-dev"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--update-results", action="store_true")
    args = parser.parse_args()
    rows = [json.loads(line) for line in (args.eval / "instances.jsonl").read_text().splitlines()]
    queries = [r["problem_statement"] for r in rows if r["repo"] == args.issues]
    if len(queries) < 2:
        raise SystemExit(f"fewer than two issues of {args.issues} in {args.eval}")
    profile = profile_named(args.repo, "implementation")

    def opened(remember: bool) -> Retriever:
        retriever = open_retriever(args.repo, Settings(), args.store)
        if remember:
            retriever.lexical.remember()
        return retriever

    plain, kept = opened(False), opened(True)
    expected = {q: plain.retrieve(q, profile).to_json() for q in queries}
    for query in queries:
        assert kept.retrieve(query, profile).to_json() == expected[query], "slices differ"
    times: dict[tuple[str, bool], list[float]] = {
        (kind, remember): [] for kind in ("again", "new") for remember in (False, True)
    }
    half = len(queries) // 2
    for _ in range(args.rounds):
        for warm, measured in ((queries[:half], queries[half:]), (queries[half:], queries[:half])):
            fresh = {remember: opened(remember) for remember in (False, True)}
            for query in warm:
                for retriever in fresh.values():
                    retriever.retrieve(query, profile)
            for query in measured:
                for key, retriever in (
                    (("again", False), plain),
                    (("again", True), kept),
                    (("new", False), fresh[False]),
                    (("new", True), fresh[True]),
                ):
                    start = time.perf_counter()
                    got = retriever.retrieve(query, profile).to_json()
                    times[key].append((time.perf_counter() - start) * 1000)
                    assert got == expected[query], "slices differ"
            for retriever in fresh.values():
                retriever.close()
    plain.close()
    kept.close()
    lines = [
        f"Repository: {args.issues} (the tree and store of `{args.store.name}`), its {len(queries)} "
        f"development-split issues as queries, `implementation` profile, {args.rounds} rounds, "
        f"interleaved in one process; every slice byte-identical to the plain reader's. "
        f"Date: {date.today().isoformat()}.",
        "",
        "| queries | plain p50 | plain p95 | remembering p50 | remembering p95 | ratio of p50 |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for kind, title in (("again", "asked again (embeddings kept)"), ("new", "new to the reader")):
        p50, p95 = percentiles(times[(kind, False)])
        q50, q95 = percentiles(times[(kind, True)])
        lines.append(
            f"| {title} | {p50:.1f} ms | {p95:.1f} ms | {q50:.1f} ms | {q95:.1f} ms | {q50 / p50:.2f}× |"
        )
    text = "\n".join(lines)
    print(text)
    if args.update_results:
        update_section(
            "warm-latency",
            "Warm retrieve latency on real issues (`benchmarks/warm_latency.py`)",
            text,
            "python benchmarks/warm_latency.py --repo TREE --store STORE "
            "--issues OWNER/NAME --update-results",
        )


if __name__ == "__main__":
    main()
