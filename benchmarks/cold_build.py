"""Cold `kbc build --no-llm` at five sizes: each pass's seconds and peak RSS, how each grows
with lines of text, the raw embedder's throughput on the same units as the floor, and the time
to the first slice and to full vectors against a lexical build.

    MIRROR_ROOT=DIR python benchmarks/cold_build.py [--work DIR] [--only kbc,flask]
        [--floor-units 800] [--update-results]

Corpora: kbc (a fresh clone of this checkout's HEAD), flask (the base commit of
``pallets__flask-4992``, from the development split's mirror under ``MIRROR_ROOT``),
sphinx v3.4.0 (Python, minified JavaScript and message catalogs, from a mirror under
``MIRROR_ROOT``), networkx 3.4.2 (its sdist) and sympy 1.14.0 (its pure-Python wheel), both fetched from
PyPI's simple index and checked by sha256. Each is built from nothing (a new store, an
empty embedding cache) three times, in this order: lexical (``-c index.embed_model=none
build --wait``: every pass, no vectors) then ``kbc retrieve`` of the README's task, the
baseline; default settings (a first index on a large repository, the facts and vectors
behind it) then the same retrieve, and the time until the vectors left to the background
are in (both from ``benchmarks/first_slice.py``, which also sets the first slice against
the code of another revision); and ``--wait`` (every vector before it returns) in a child
process whose JSON summary gives each pass's seconds and the peak RSS reached by its end,
``wait4`` the whole build's wall time and peak RSS.

The floors: right after each build, in a process of its own, the packaged model alone
(fastembed's ``embed`` with kbc's batch size, inputs read as the build reads them, in
length order as the build batches them) embeds an even sample of the very units the
build embedded, and libcst alone parses an even sample of the corpus's Python files; the
embedding and analysis passes are compared with those rates. A row per corpus lands in
``WORK/results.jsonl``, so an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from cold_build_tables import tables
from results_file import update_section
from sources import CORPORA, fresh_copy, source_of
from timing import clock, timed


def build(tree: Path, cache: Path) -> dict[str, Any]:
    """``kbc build --no-llm --wait`` in a child: its JSON summary, wall seconds and peak RSS."""
    env = {**os.environ, "KBC_CACHE_DIR": str(cache)}
    for name in ("KBC_LLM_MODEL", "KBC_EMBED_MODEL", "KBC_CHROMA_URL"):
        env.pop(name, None)
    command = [sys.executable, "-m", "kbc", "build", "--no-llm", "--wait", str(tree), "--format", "json"]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        with clock() as sample:
            child = subprocess.Popen(command, stdout=out, stderr=err, env=env, text=True)
            _, status, usage = os.wait4(child.pid, 0)
        seconds = sample.wall
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"kbc build of {tree} exited {code}:\n{stderr[-2000:]}")
    summary = json.loads(stdout)
    return {"wall": round(seconds, 1), "peak_rss_mb": round(usage.ru_maxrss / 1024), "summary": summary}


def lines_of(store: Path) -> tuple[int, int, int]:
    """(text files, lines of text, Python files) from the store's inventory."""
    generation = store / (store / "CURRENT").read_text().strip()
    files = json.loads((generation / "inventory.json").read_text())["files"]
    return len(files), sum(f["lines"] for f in files), sum(1 for f in files if f["language"] == "python")


def floor(store: Path, units_wanted: int) -> dict[str, Any]:
    """The packaged model alone on an even sample of the units the build embedded."""
    from kbc.index.embed import BATCH_SIZE, load_embedder
    from kbc.index.lexical import LexicalIndex
    from kbc.index.units import units_of
    from kbc.store.layout import index_dir

    embedder = load_embedder("minilm-l6-int8")
    lexical = LexicalIndex(index_dir(store) / "lexical.sqlite")
    try:
        units = units_of(lexical.all_chunks(), embedder.model_id)
    finally:
        lexical.close()
    ordered = sorted(units, key=lambda u: (len(u.text), u.id))
    step = max(1, len(ordered) // max(1, units_wanted))
    sample = [u.text for u in ordered[::step]][:units_wanted]
    model = embedder.model  # type: ignore[attr-defined]
    embedder.embed(sample[:BATCH_SIZE])  # the tokenizer set to the units' cap, the session warm
    seconds = timed(lambda: list(model.embed(sample, batch_size=BATCH_SIZE))).wall
    return {
        "floor_units": len(sample),
        "floor_seconds": round(seconds, 2),
        "floor_rate": round(len(sample) / seconds, 1),
    }


def parse_floor(tree: Path, files_wanted: int = 200) -> dict[str, Any]:
    """libcst's parse alone, one process, on an even sample of the tree's Python files: its
    microseconds per line are the analysis pass's floor (the pass parses each file once)."""
    import libcst

    files = sorted(p for p in tree.rglob("*.py") if ".git" not in p.parts and ".kbc" not in p.parts)
    step = max(1, len(files) // files_wanted)
    lines = 0
    seconds = 0.0
    for path in files[::step][:files_wanted]:
        data = path.read_bytes()
        try:
            with clock() as parsed:
                libcst.parse_module(data)
        except Exception:
            continue
        seconds += parsed.wall
        lines += data.count(b"\n")
    return {"parse_us_per_line": round(1e6 * seconds / lines, 1) if lines else 0.0}


def child(flag: str, path: Path, *extra: str, cache: Path | None = None) -> dict[str, Any]:
    """A floor measured in a process of its own, so the model's memory never counts in a
    build's peak RSS (a child's high-water mark starts from its parent's at fork)."""
    env = dict(os.environ)
    if cache is not None:
        env["KBC_CACHE_DIR"] = str(cache)
    done = subprocess.run(
        [sys.executable, __file__, flag, str(path), *extra],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    return dict(json.loads(done.stdout))


def python_lines(tree: Path) -> int:
    return sum(
        p.read_bytes().count(b"\n")
        for p in tree.rglob("*.py")
        if ".git" not in p.parts and ".kbc" not in p.parts
    )


def measure(corpus: str, work: Path, floor_units: int) -> dict[str, Any]:
    source, origin = source_of(corpus, work)
    tree = fresh_copy(source, work, corpus)
    cache = Path(tempfile.mkdtemp(prefix="kbc-cache-", dir=work))
    from first_slice import run as first_slice  # it imports this module

    try:
        lexical = first_slice(tree, "lexical", cache)
        default = first_slice(tree, "default", cache)
        shutil.rmtree(tree / ".kbc", ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir()
        built = build(tree, cache)
        store = tree / ".kbc"
        files, lines, python_files = lines_of(store)
        index = built["summary"]["index"]
        row: dict[str, Any] = {
            "corpus": corpus,
            "origin": origin,
            "files": files,
            "lines": lines,
            "python_files": python_files,
            "units": index["units"],
            "embedded": index["embedded"],
            "retrieval": index["retrieval"],
            "wall": built["wall"],
            "peak_rss_mb": built["peak_rss_mb"],
            "symbols": built["summary"]["analyze"]["symbols"],
            "edges": built["summary"]["analyze"]["import_edges"] + built["summary"]["analyze"]["call_edges"],
            "passes": {
                p["name"]: {"seconds": p["seconds"], "peak_rss_mb": p["peak_rss_mb"]}
                for p in built["summary"]["passes"]
            },
        }
        row["lexical"] = lexical
        row["default"] = default
        row.update(child("--floor", store, "--floor-units", str(floor_units), cache=cache))
        row.update(child("--parse-floor", source))
        row["python_lines"] = python_lines(source)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(tree, ignore_errors=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "kbc-cold-build")
    parser.add_argument("--only", default="", help="comma-separated corpora (default: all four)")
    parser.add_argument("--floor-units", type=int, default=800)
    parser.add_argument("--update-results", action="store_true")
    parser.add_argument("--floor", type=Path, help=argparse.SUPPRESS)  # the children's parts
    parser.add_argument("--parse-floor", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor is not None:
        print(json.dumps(floor(args.floor, args.floor_units)))
        return
    if args.parse_floor is not None:
        print(json.dumps(parse_floor(args.parse_floor)))
        return
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    results = work / "results.jsonl"
    done = {}
    if results.exists():
        lines = results.read_text().splitlines()
        done = {r["corpus"]: r for r in (json.loads(line) for line in lines if line)}
    wanted = [c.strip() for c in args.only.split(",") if c.strip()] or list(CORPORA)
    for corpus in wanted:
        if corpus in done:
            continue
        print(f"building {corpus} …", file=sys.stderr, flush=True)
        row = measure(corpus, work, args.floor_units)
        done[corpus] = row
        with results.open("a") as fh:
            fh.write(json.dumps(row) + "\n")
        print(f"  {row['wall']:.1f} s, {row['peak_rss_mb']} MB", file=sys.stderr, flush=True)
    for corpus, row in done.items():
        if "parse_us_per_line" not in row and corpus in wanted:  # rows of an earlier run
            row.update(child("--parse-floor", source_of(corpus, work)[0]))
            row.setdefault("python_lines", python_lines(source_of(corpus, work)[0]))
    results.write_text("".join(json.dumps(done[c]) + "\n" for c in done))
    text = tables([done[c] for c in wanted if c in done])
    print(text)
    if args.update_results:
        update_section(
            "cold-build",
            "Cold build at scale (`benchmarks/cold_build.py`)",
            text,
            "MIRROR_ROOT=... python benchmarks/cold_build.py --update-results",
        )


if __name__ == "__main__":
    main()
