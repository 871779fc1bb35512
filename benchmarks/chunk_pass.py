"""The chunk pass's work on every Python file of a corpus, the code of two revisions in turn.

    python benchmarks/chunk_pass.py DIR [--baseline REV] [--code REV] [--rounds N]

Each revision's ``kbc`` is taken with ``git archive`` into a folder of its own; a child
process of each, in turn (``--rounds`` times, the order rotated each round), reads, cuts and tokenizes every
Python file under DIR as the first index does (:func:`kbc.index.prepare.prepare` of a task
``outlined``: definitions from ``ast``, no credential found). Printed: the CPU seconds of
each run, the median of each revision, their ratio, and a digest of every chunk (id, span,
token count, text) and lexical column, which two revisions that cut alike share.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from itertools import count
from pathlib import Path

from timing import interleaved

REPOSITORY = Path(__file__).resolve().parents[1]

CHILD = """
import hashlib, json, sys
from pathlib import Path
from timing import clock
from kbc.index.prepare import ChunkTask, prepare
root = Path(sys.argv[1])
tasks = [
    ChunkTask(str(p.relative_to(root)), str(p), "python",
              ".".join(p.relative_to(root).with_suffix("").parts), None, False, 60, 12, (), "",
              outlined=True)
    for p in sorted(root.rglob("*.py"))
]
digest = hashlib.sha256()
with clock() as sample:
    for task in tasks:
        path, chunks, secrets, columns = prepare(task)
        cut = [(c.id, c.start_line, c.end_line, c.tokens, c.text) for c in chunks]
        digest.update(repr((cut, columns)).encode())
print(json.dumps({"files": len(tasks), "cpu": sample.cpu, "digest": digest.hexdigest()[:16]}))
"""


def checkout(revision: str, into: Path) -> Path:
    """``revision``'s tree (its ``kbc`` package) under ``into``."""
    into.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(REPOSITORY), "archive", revision, "kbc"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def run(code: Path, corpus: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(corpus)],
        capture_output=True,
        text=True,
        check=True,
        cwd=code,  # the revision's kbc first on the path, never the working tree's
        # the revision's kbc, and the harness's clock (it imports no kbc)
        env={
            "PYTHONPATH": os.pathsep.join([str(code), str(Path(__file__).resolve().parent)]),
            "PATH": "/usr/bin:/bin",
        },
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--baseline", default="main")
    parser.add_argument("--code", default="HEAD")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        codes = {
            name: checkout(name, Path(folder) / str(i)) for i, name in enumerate((args.baseline, args.code))
        }
        cpu: dict[str, list[float]] = {name: [] for name in codes}
        digests: dict[str, set[str]] = {name: set() for name in codes}

        def child(name: str, code: Path) -> Callable[[], None]:
            """A process of ``code`` cutting the corpus; the CPU seconds it reports are kept."""
            rounds = count(1)

            def one() -> None:
                found = run(code, args.corpus.resolve())
                cpu[name].append(float(str(found["cpu"])))
                digests[name].add(str(found["digest"]))
                seconds = float(str(found["cpu"]))
                files, digest = found["files"], found["digest"]
                print(f"round {next(rounds)} {name}: {files} files, {seconds:.2f} CPU-s, {digest}")

            return one

        interleaved({name: child(name, code) for name, code in codes.items()}, args.rounds)
    before, after = (statistics.median(cpu[name]) for name in codes)
    same = "the same chunks" if digests[args.baseline] == digests[args.code] else "different chunks"
    ratio = after / before
    print(f"median {args.baseline} {before:.2f} CPU-s, {args.code} {after:.2f} CPU-s: {ratio:.2f}x, {same}")


if __name__ == "__main__":
    main()
