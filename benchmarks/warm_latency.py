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
from collections.abc import Callable
from pathlib import Path

from results_file import report
from timing import Load, clock, interleaved

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
    answers: list[tuple[str, str]] = []

    def asking(retriever: Retriever, measured: list[str]) -> Callable[[], None]:
        """Each call, the next of ``measured`` asked of ``retriever``, its slice kept."""
        pending = iter(measured)

        def ask() -> None:
            query = next(pending)
            answers.append((query, retriever.retrieve(query, profile).to_json()))

        return ask

    half = len(queries) // 2
    load = Load()
    for _ in range(args.rounds):
        for warm, measured in ((queries[:half], queries[half:]), (queries[half:], queries[:half])):
            fresh = {remember: opened(remember) for remember in (False, True)}
            for query in warm:
                for retriever in fresh.values():
                    retriever.retrieve(query, profile)
            # One round per query: the four readers answer it, in an order rotated from query to query.
            readers = {
                ("again", False): plain,
                ("again", True): kept,
                ("new", False): fresh[False],
                ("new", True): fresh[True],
            }
            samples = interleaved(
                {f"{kind} {remember}": asking(r, measured) for (kind, remember), r in readers.items()},
                len(measured),
                load,
            )
            for kind, remember in readers:
                times[(kind, remember)] += [s.wall * 1000 for s in samples[f"{kind} {remember}"]]
            for retriever in fresh.values():
                retriever.close()
    assert all(got == expected[query] for query, got in answers), "slices differ"
    plain.close()
    kept.close()
    lines = [
        f"Repository: {args.issues} (the tree and store of `{args.store.name}`), its {len(queries)} "
        f"development-split issues as queries, `implementation` profile, {args.rounds} rounds, "
        f"interleaved in one process; every slice byte-identical to the plain reader's.",
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
    report(
        "\n".join(lines),
        args.update_results,
        "warm-latency",
        "Warm retrieve latency on real issues (`benchmarks/warm_latency.py`)",
        "python benchmarks/warm_latency.py --repo TREE --store STORE --issues OWNER/NAME --update-results",
        load,
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
            with clock() as sample:
                text = retriever.retrieve(queries[n], profile).to_json()
            cpu[n], wall[n] = sample.cpu * 1000, sample.wall * 1000
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

    def child(name: str, code: Path) -> Callable[[], None]:
        """A process of the code at ``code`` asking every query; its per-request times kept."""

        def ask() -> None:
            env = {**os.environ, "PYTHONPATH": f"{code}{os.pathsep}{Path(__file__).parent}"}
            found = json.loads(
                subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
            )
            got[name]["wall"] += [float(v) for v in found["wall"]]
            got[name]["cpu"] += [float(v) for v in found["cpu"]]
            digests.setdefault(name, [str(d) for d in found["digest"]])

        return ask

    # The figures are the children's own per-request times; the rounds give their order and load.
    load = Load()
    interleaved(
        {"before": child("before", args.before.resolve()), "after": child("after", here)}, args.rounds, load
    )
    same = sum(a == b for a, b in zip(digests["before"], digests["after"], strict=True))
    lines = [
        f"Repository: the tree and store of `{args.store.name}`; {len(queries)} issues of "
        f"{args.issues} in the development split as tasks, each new to a remembering reader (as "
        f"`kbc serve` keeps it) that has answered the other half; `implementation` profile; "
        f"{args.rounds} rounds, the code before and this code in turn, each in a process of its "
        f"own. Slices byte-identical before and after: {same} of {len(queries)}.",
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
        load,
    )


if __name__ == "__main__":
    main()
