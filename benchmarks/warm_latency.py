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

    python benchmarks/warm_latency.py --repo TREE --store STORE --issues OWNER/NAME
        --before DIR [--rounds 3] [--update-results]

With ``--before DIR`` (a checkout of the code to compare with, e.g. ``git worktree add DIR
main``), the code of DIR and this code each answer, in a process of their own and in turn
round after round, every query new to a remembering reader (as ``kbc serve`` keeps it) that has
answered the other half; each request's wall and CPU time are kept, and the two codes' slices
are compared byte for byte. ``--issues all`` takes every issue of the split (another
repository's issues are tasks new to the store as well).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

from results_file import report, update_section

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
    parser.add_argument("--before", type=Path, help="a checkout of the code to compare with")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--update-results", action="store_true")
    args = parser.parse_args()
    rows = [json.loads(line) for line in (args.eval / "instances.jsonl").read_text().splitlines()]
    queries = [r["problem_statement"] for r in rows if args.issues in (r["repo"], "all")]
    if len(queries) < 2:
        raise SystemExit(f"fewer than two issues of {args.issues} in {args.eval}")
    if args.child:
        print(json.dumps(new_queries(args.repo, args.store, queries)))
        return
    if args.before is not None:
        before_after(args, queries)
    else:
        plain_and_remembering(args, queries)


def plain_and_remembering(args: argparse.Namespace, queries: list[str]) -> None:
    """A plain reader and a remembering one, interleaved in this process."""
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


def new_queries(repo: Path, store: Path, queries: list[str]) -> dict[str, list[object]]:
    """Each query asked of a remembering reader that has answered the other half of them:
    wall ms, CPU ms and the slice's digest, by query."""
    profile = profile_named(repo, "implementation")
    half = len(queries) // 2
    wall: list[object] = [0.0] * len(queries)
    cpu: list[object] = [0.0] * len(queries)
    digest: list[object] = [""] * len(queries)
    for warm, measured in (
        (range(half), range(half, len(queries))),
        (range(half, len(queries)), range(half)),
    ):
        retriever = open_retriever(repo, Settings(), store)
        retriever.lexical.remember()
        for n in warm:
            retriever.retrieve(queries[n], profile)
        for n in measured:
            started, used = time.perf_counter(), time.process_time()
            text = retriever.retrieve(queries[n], profile).to_json()
            cpu[n] = (time.process_time() - used) * 1000
            wall[n] = (time.perf_counter() - started) * 1000
            digest[n] = hashlib.sha256(text.encode()).hexdigest()
        retriever.close()
    return {"wall": wall, "cpu": cpu, "digest": digest}


def before_after(args: argparse.Namespace, queries: list[str]) -> None:
    """The code of ``args.before`` and this code, each in a process of its own, in turn."""
    here = Path(__file__).resolve().parents[1]
    command = [sys.executable, __file__, "--child", "--repo", str(args.repo), "--store", str(args.store)]
    command += ["--issues", args.issues, "--eval", str(args.eval)]
    got: dict[str, dict[str, list[float]]] = {
        "before": {"wall": [], "cpu": []},
        "after": {"wall": [], "cpu": []},
    }
    digests: dict[str, list[str]] = {}
    for _ in range(args.rounds):
        for name, code in (("before", args.before.resolve()), ("after", here)):
            env = {**os.environ, "PYTHONPATH": f"{code}{os.pathsep}{Path(__file__).parent}"}
            found = json.loads(
                subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
            )
            got[name]["wall"] += [float(v) for v in found["wall"]]
            got[name]["cpu"] += [float(v) for v in found["cpu"]]
            digests.setdefault(name, [str(d) for d in found["digest"]])
    same = sum(a == b for a, b in zip(digests["before"], digests["after"], strict=True))
    lines = [
        f"Repository: the tree and store of `{args.store.name}`; {len(queries)} issues of "
        f"{args.issues} in the development split as tasks, each new to a remembering reader (as "
        f"`kbc serve` keeps it) that has answered the other half; `implementation` profile; "
        f"{args.rounds} rounds, the code before and this code in turn, each in a process of its "
        f"own. Slices byte-identical before and after: {same} of {len(queries)}. "
        f"Date: {date.today().isoformat()}.",
        "",
        "| code | wall p50 | wall p95 | CPU p50 | CPU p95 |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name in ("before", "after"):
        w50, w95 = percentiles(got[name]["wall"])
        c50, c95 = percentiles(got[name]["cpu"])
        lines.append(f"| {name} | {w50:.1f} ms | {w95:.1f} ms | {c50:.1f} ms | {c95:.1f} ms |")
    ratio = statistics.median(got["after"]["cpu"]) / statistics.median(got["before"]["cpu"])
    lines += ["", f"CPU p50 after ÷ before: {ratio:.2f}×."]
    report(
        "\n".join(lines),
        args.update_results,
        f"warm-before-after-{args.store.name}",
        f"Warm retrieve before and after, `{args.store.name}` (`benchmarks/warm_latency.py --before`)",
        "python benchmarks/warm_latency.py --repo TREE --store STORE --issues OWNER/NAME|all "
        "--before DIR --update-results",
    )


if __name__ == "__main__":
    main()
