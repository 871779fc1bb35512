"""Time to the first slice after a cold build, and to full vectors, against a lexical build.

    MIRROR_ROOT=DIR python benchmarks/first_slice.py [--work DIR] [--only kbc,networkx]

For each corpus (those of ``benchmarks/cold_build.py``), from nothing each time (a new
store, an empty embedding cache), in one run and in this order:

- ``lexical``: ``kbc -c index.embed_model=none build`` then ``kbc retrieve``: the baseline;
- ``default``: ``kbc build`` (it waits for at most ``index.wait_units`` units) then
  ``kbc retrieve``; when it left units to the background, the time until ``kbc status``
  no longer shows them filling in is the time to full vectors;
- ``wait``: ``kbc build --wait`` then ``kbc retrieve`` (every vector before the slice).

Each slice's confidence and the shares of it its three largest files hold are recorded beside
the times (what the first slice gives up against the one after every vector, if anything).

Each figure is wall seconds from the build's start; the ratios divide by the lexical
baseline of the same corpus in the same run. Rows land in ``WORK/first_slice.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from cold_build import fresh_copy, source_of

TASK = "how does retrieval stay within the token budget?"  # the README's (timing, not relevance)
VARIANTS = {
    "lexical": ("-c", "index.embed_model=none", "build"),
    "default": ("build",),
    "wait": ("build", "--wait"),
}


def kbc(*args: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "kbc", *args], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"kbc {' '.join(args)} failed: {done.stderr[-2000:]}")
    return done.stdout


def run(tree: Path, variant: str, cache: Path) -> dict[str, Any]:
    env = {**os.environ, "KBC_CACHE_DIR": str(cache)}
    for name in ("KBC_LLM_MODEL", "KBC_EMBED_MODEL", "KBC_CHROMA_URL", "KBC_WAIT_UNITS"):
        env.pop(name, None)
    shutil.rmtree(tree / ".kbc", ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    flags = list(VARIANTS[variant][VARIANTS[variant].index("build") + 1 :])
    config = list(VARIANTS[variant][: VARIANTS[variant].index("build")])
    started = time.perf_counter()
    summary = json.loads(kbc(*config, "build", "--no-llm", *flags, str(tree), "--format", "json", env=env))
    built = time.perf_counter() - started
    sliced = json.loads(kbc(*config, "retrieve", "--repo", str(tree), "--format", "json", TASK, env=env))
    first = time.perf_counter() - started
    full = first if summary["index"]["retrieval"] == "hybrid" and not summary["index"]["pending"] else None
    if summary["index"]["pending"]:
        while True:
            status = json.loads(kbc("status", "--repo", str(tree), "--format", "json", env=env))
            if "filling" not in status["index"]:
                full = time.perf_counter() - started
                break
            if status["index"].get("filling") == "stopped":
                log = (tree / ".kbc" / "embedding.log").read_text(errors="replace")[-2000:]
                raise SystemExit(f"{tree}: the background embedding stopped: {status}\n{log}")
            time.sleep(1.0)
        _until_gone(tree)
    return {
        "variant": variant,
        "build": round(built, 1),
        "first_slice": round(first, 1),
        "full_vectors": None if full is None else round(full, 1),
        "units": summary["index"]["units"] or summary["index"]["pending"],
        "pending": summary["index"]["pending"],
        "retrieval": sliced["retrieval"],
        "confidence": sliced.get("confidence"),
        "shares": _shares(sliced),
        "passes": {p["name"]: p["seconds"] for p in summary["passes"]},
    }


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/kbc-first-slice"))
    parser.add_argument("--only", default="kbc,networkx,sympy")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    rows = args.work / "first_slice.jsonl"
    for corpus in args.only.split(","):
        source, how = source_of(corpus, args.work)
        tree = fresh_copy(source, args.work, corpus)
        for variant in VARIANTS:
            row = {"corpus": corpus, "source": how, **run(tree, variant, args.work / "cache")}
            print(json.dumps(row), flush=True)
            with rows.open("a") as out:
                out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
