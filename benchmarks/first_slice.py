"""Time to the first slice after a cold build, to the facts and to full vectors, against a
lexical build, a build that waits for every pass, and the code of another revision.

    MIRROR_ROOT=DIR python benchmarks/first_slice.py [--work DIR] [--only kbc,sympy]
        [--baseline REV] [--stop-vectors] [--update-results] [--check]

For each corpus (those of ``benchmarks/sources.py``), from nothing each time (a new
store, an empty embedding cache), in one run and in this order:

- ``default``: the README's command, ``kbc build`` then ``kbc retrieve``: a first build of a
  repository with more Python files than ``index.first_files`` publishes a first index and
  leaves the facts, views and vectors to a background process; the time until ``kbc status``
  no longer shows the facts coming is the time to the facts, until it shows every vector the
  time to full vectors (``--stop-vectors``: the background process is stopped once the facts
  are in, and full vectors are left to ``wait``);
- ``baseline``: the same command with the code of ``--baseline`` (default ``main``): the
  code before against the code measured (``--code``, default ``HEAD``; each taken with
  ``git archive`` and run from a folder of its own);
- ``lexical``: ``kbc -c index.embed_model=none build --wait`` then ``kbc retrieve``: every
  pass, no vectors;
- ``wait``: ``kbc build --wait`` then ``kbc retrieve`` (every pass and every vector before
  the slice).

Each slice's confidence and the shares of it its three largest files hold are recorded beside
the times (what the first slice gives up against the one after every pass, if anything).
``--check`` exits 1 when a corpus's first slice is not ``SOONER`` (2) times sooner than the
baseline code's in the same run (issue 55's done-when for the README's command).
Each figure is wall seconds from the build's start, and CPU seconds of the build and
retrieve commands (children included); the ratios divide by the other variants of the same
corpus in the same run. Rows land in ``WORK/first_slice.jsonl``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from sources import fresh_copy, source_of
from timing import clock

TASK = "how does retrieval stay within the token budget?"  # the README's (timing, not relevance)
VARIANTS = {
    "default": ("build",),
    "baseline": ("build",),
    "lexical": ("-c", "index.embed_model=none", "build", "--wait"),
    "wait": ("build", "--wait"),
}
HERE = Path(__file__).resolve().parent
SOONER = 2.0  # issue 55: the README's command prints its slice at least this many times sooner


def kbc(*args: str, env: dict[str, str]) -> str:
    # -P: the working folder is not put on the module path; PYTHONPATH names the code run
    done = subprocess.run(
        [sys.executable, "-P", "-m", "kbc", *args], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"kbc {' '.join(args)} failed: {done.stderr[-2000:]}")
    return done.stdout


def code_of(revision: str, work: Path) -> Path:
    """The package of ``revision`` of this repository, unpacked on its own (``git archive``)."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", revision], cwd=HERE, check=True, capture_output=True, text=True
    ).stdout.strip()
    target = work / f"code-{commit}"
    if not target.exists():
        partial = target.with_name(target.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        archive = subprocess.run(
            ["git", "archive", commit, "kbc", "config"], cwd=HERE.parent, check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(partial)], input=archive, check=True)
        partial.rename(target)
    return target


def run(
    tree: Path,
    variant: str,
    cache: Path,
    code: Path | None = None,
    stop_vectors: bool = False,
) -> dict[str, Any]:
    env = {**os.environ, "KBC_CACHE_DIR": str(cache), "PYTHONPATH": str(code or HERE.parent)}
    for name in ("KBC_LLM_MODEL", "KBC_EMBED_MODEL", "KBC_CHROMA_URL", "KBC_WAIT_UNITS", "KBC_FIRST_FILES"):
        env.pop(name, None)
    shutil.rmtree(tree / ".kbc", ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    flags = list(VARIANTS[variant][VARIANTS[variant].index("build") + 1 :])
    config = list(VARIANTS[variant][: VARIANTS[variant].index("build")])
    # The clock times the build and the slice; the moments the facts and full vectors are in
    # are read while polling, on one timeline from the build's start.
    started = time.perf_counter()
    with clock() as building:
        summary = json.loads(
            kbc(*config, "build", "--no-llm", *flags, str(tree), "--format", "json", env=env)
        )
    with clock() as slicing:
        sliced = json.loads(kbc(*config, "retrieve", "--repo", str(tree), "--format", "json", TASK, env=env))
    built, first = building.wall, building.wall + slicing.wall
    first_cpu = building.cpu + slicing.cpu
    later = summary.get("later", "")
    full = first if summary["index"]["retrieval"] == "hybrid" and not summary["index"]["pending"] else None
    facts = None if later else first
    if later or summary["index"]["pending"]:
        while True:
            status = json.loads(kbc("status", "--repo", str(tree), "--format", "json", env=env))
            index = status["index"]
            if facts is None and "later" not in index:
                facts = time.perf_counter() - started
            if facts is not None and stop_vectors and summary["filling"] > 0:
                _stop(summary["filling"])
                break
            if facts is not None and "later" not in index and "filling" not in index:
                full = time.perf_counter() - started
                break
            if index.get("filling") == "stopped" or index.get("later") == "stopped":
                log = (tree / ".kbc" / "embedding.log").read_text(errors="replace")[-2000:]
                raise SystemExit(f"{tree}: the background process stopped: {status}\n{log}")
            time.sleep(1.0)
        _until_gone(tree)
    return {
        "variant": variant,
        "build": round(built, 1),
        "first_slice": round(first, 1),
        "first_slice_cpu": round(first_cpu, 1),
        "facts": None if facts is None else round(facts, 1),
        "full_vectors": None if full is None else round(full, 1),
        "units": summary["index"]["units"] or summary["index"]["pending"],
        "pending": summary["index"]["pending"],
        "retrieval": sliced["retrieval"],
        "confidence": sliced.get("confidence"),
        "shares": _shares(sliced),
        "passes": {p["name"]: p["seconds"] for p in summary["passes"]},
    }


def _stop(pid: int) -> None:
    """Stop the background process (this run started it) and wait until it is gone."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)


def _shares(sliced: dict[str, Any]) -> dict[str, float]:
    """The three paths holding most of the slice's tokens, with their shares."""
    held: dict[str, int] = {}
    for item in sliced["items"]:
        held[item["path"]] = held.get(item["path"], 0) + item["tokens"]
    top = sorted(held, key=lambda p: (-held[p], p))[:3]
    return {path: round(held[path] / max(1, sliced["tokens"]), 3) for path in top}


def _until_gone(tree: Path) -> None:
    """Wait for the process that embedded the vectors to let go of the store (it publishes,
    then tidies up)."""
    from kbc.store.lock import filling

    while filling(tree / ".kbc"):
        time.sleep(0.2)


def late_corpora(rows: list[dict[str, Any]]) -> list[str]:
    """The corpora whose first slice (``default``) is not ``SOONER`` times sooner than the
    baseline code's in the same run (a corpus without both variants is not judged)."""
    late = []
    for corpus in dict.fromkeys(r["corpus"] for r in rows):
        by = {r["variant"]: r for r in rows if r["corpus"] == corpus}
        if (
            "default" in by
            and "baseline" in by
            and by["default"]["first_slice"] * SOONER > by["baseline"]["first_slice"]
        ):
            late.append(corpus)
    return late


def table(rows: list[dict[str, Any]]) -> str:
    """The first slice against the baseline code's, the lexical build's and the full build's,
    for each corpus of ``rows`` (one row per variant)."""
    out = [
        "Wall seconds from the start of `kbc build` to the end of `kbc retrieve` of the README's "
        "task (CPU seconds of both commands in brackets), each build from nothing (a new store, "
        "an empty embedding cache), every variant of a corpus in the same run: `default` (a "
        "first index, the facts and vectors behind it), the same command on the baseline code, "
        "`lexical` (`-c index.embed_model=none build --wait`: every pass, no vectors) and "
        "`wait` (`build --wait`: every pass and vector):",
        "",
        "| corpus | first slice (default) | baseline code | ÷ baseline | lexical build "
        "| ÷ lexical | full build | ÷ full | facts in (default) | full vectors (default) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    corpora = list(dict.fromkeys(r["corpus"] for r in rows))
    for corpus in corpora:
        by = {r["variant"]: r for r in rows if r["corpus"] == corpus}
        first = by.get("default")
        if first is None:
            continue

        def cell(variant: str, first: dict[str, Any] = first, by: dict[str, Any] = by) -> tuple[str, str]:
            other = by.get(variant)
            if other is None:
                return "–", "–"
            return (
                f"{other['first_slice']:.1f} s ({other['first_slice_cpu']:.1f})",
                f"{first['first_slice'] / other['first_slice']:.2f}×",
            )

        baseline, lexical, full = cell("baseline"), cell("lexical"), cell("wait")
        facts = "–" if first["facts"] is None else f"{first['facts']:.1f} s"
        vectors = "–" if first["full_vectors"] is None else f"{first['full_vectors']:.1f} s"
        out.append(
            f"| {corpus} | {first['first_slice']:.1f} s ({first['first_slice_cpu']:.1f}) "
            f"| {baseline[0]} | {baseline[1]} | {lexical[0]} | {lexical[1]} | {full[0]} | {full[1]} "
            f"| {facts} | {vectors} |"
        )
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/kbc-first-slice"))
    parser.add_argument("--only", default="kbc,sympy")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--baseline", default="main", help="the revision whose code is the baseline")
    parser.add_argument("--code", default="HEAD", help="the revision whose code is measured")
    parser.add_argument(
        "--stop-vectors", action="store_true", help="stop the background once the facts are in"
    )
    parser.add_argument("--update-results", action="store_true")
    parser.add_argument(
        "--check",
        action="store_true",
        help=f"exit 1 unless each first slice is {SOONER}x sooner than the baseline's",
    )
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    baseline, measured = code_of(args.baseline, args.work), code_of(args.code, args.work)
    out = args.work / "first_slice.jsonl"
    rows = []
    for corpus in args.only.split(","):
        source, how = source_of(corpus, args.work)
        tree = fresh_copy(source, args.work, corpus)
        for variant in args.variants.split(","):
            code = baseline if variant == "baseline" else measured
            row = {
                "corpus": corpus,
                "source": how,
                **run(tree, variant, args.work / "cache", code, args.stop_vectors),
            }
            if variant == "baseline":
                row["baseline"] = args.baseline
            rows.append(row)
            print(json.dumps(row), flush=True)
            with out.open("a") as fh:
                fh.write(json.dumps(row) + "\n")
    text = table(rows)
    print(text)
    late = late_corpora(rows)
    if args.update_results:
        from results_file import update_section

        update_section(
            "first-slice",
            "First slice from the cheapest facts (`benchmarks/first_slice.py`)",
            text,
            f"python benchmarks/first_slice.py --only {args.only} --baseline {args.baseline} "
            f"--code {args.code}" + (" --stop-vectors" if args.stop_vectors else "") + " --update-results",
        )
    if args.check and late:
        raise SystemExit(
            f"the first slice is not {SOONER}x sooner than the baseline code's: {', '.join(late)}"
        )


if __name__ == "__main__":
    main()
