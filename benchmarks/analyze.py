"""Facts pass speed against the parsers' floors, measured in one run.

    python benchmarks/analyze.py [--source DIR] [--repeat 3] [--update-results]

Three timings over the same Python files, interleaved and repeated (the best
of each is kept, as this machine is shared and noisy):

- ``ast``: ``ast.parse`` of every file in this process (the floor of any parser);
- ``libcst``: ``libcst.parse_module`` of every file in this process (the floor of
  the parser kbc uses);
- ``kbc``: the whole facts pass, ``analyze_repository`` with a fresh store: discover,
  parse and walk in the process pool, link, graphs, store written.

Also reported: the facts pass with one worker (its CPU cost) and a warm re-run
(everything from the cache). The default corpus is the installed networkx
package (a dependency, so it is present offline), laid out as ``src/networkx``.
"""

from __future__ import annotations

import argparse
import ast
import shutil
import tempfile
import time
from datetime import date
from importlib.metadata import version
from pathlib import Path

import libcst
from results_file import report, row
from timing import Load, best, interleaved, spread

from kbc.analyzers.python.analyze import ANALYZER_VERSION
from kbc.domain.settings import Settings
from kbc.services.analyze import analyze_repository


def default_corpus(work: Path) -> Path:
    import networkx

    root = work / "networkx-src"
    shutil.copytree(
        Path(networkx.__file__).parent,
        root / "src" / "networkx",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    (root / "pyproject.toml").write_text("[project]\nname = 'networkx'\n")
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, help="a repository or folder of Python code")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--update-results", action="store_true", help="write the table into RESULTS.md")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="kbc-bench-") as tmp:
        work = Path(tmp)
        root = args.source.resolve() if args.source else default_corpus(work)
        files = sorted(p for p in root.rglob("*.py") if ".kbc" not in p.parts)
        sources = [p.read_bytes() for p in files]
        lines = sum(s.count(b"\n") for s in sources)
        workers = Settings().worker_count()

        def run_ast() -> None:
            for source in sources:
                ast.parse(source)

        def run_libcst() -> None:
            for source in sources:
                libcst.parse_module(source)

        def run_kbc(n_workers: int) -> None:
            store = work / f"store-{time.monotonic_ns()}"
            analyze_repository(root, Settings(workers=n_workers), store)
            shutil.rmtree(store)

        warm_store = work / "warm"
        analyze_repository(root, Settings(), warm_store)

        load = Load()
        samples = interleaved(
            {
                "ast": run_ast,
                "libcst": run_libcst,
                "kbc": lambda: run_kbc(workers),
                "kbc-1": lambda: run_kbc(1),
                "warm": lambda: analyze_repository(root, Settings(), warm_store),
            },
            args.repeat,
            load,
        )
        fastest = {k: best(v) for k, v in samples.items()}
        spreads = {k: spread(v) for k, v in samples.items()}

    name = args.source.name if args.source else "networkx (installed sources)"
    rows = [
        ("`ast.parse`, 1 process", "ast"),
        ("`libcst.parse_module`, 1 process", "libcst"),
        (f"kbc facts pass, {workers} workers", "kbc"),
        ("kbc facts pass, 1 worker", "kbc-1"),
        ("kbc facts pass, warm (all cached)", "warm"),
    ]
    table = [
        f"Corpus: {name}, {len(files)} files, {lines:,} lines. libcst {version('libcst')}, "
        f"kbc analyzer version {ANALYZER_VERSION}. Best of {args.repeat}, interleaved.",
        "",
        "| run | seconds | files/s | lines/s | × libcst parse | × ast parse | spread |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for label, key in rows:
        seconds = fastest[key]
        table.append(
            f"| {label} | {seconds:.2f} | {len(files) / seconds:,.0f} | {lines / seconds:,.0f} "
            f"| {seconds / fastest['libcst']:.2f} | {seconds / fastest['ast']:.2f} | {spreads[key]:.0%} |"
        )
    over_libcst, over_ast = fastest["kbc"] / fastest["libcst"], fastest["kbc"] / fastest["ast"]
    table.append("")
    table.append(
        f"Facts pass / bare libcst parse: **{over_libcst:.2f}×** (target ≤ 2×); "
        f"/ bare ast parse: {over_ast:.2f}×."
    )
    headline = row(
        f"Facts pass ÷ bare libcst parse ({name.split(' ')[0]}, {workers} workers)",
        f"{over_libcst:.2f}×",
        f"target ≤ 2×; ÷ ast parse {over_ast:.2f}×",
        f"Facts pass ({date.today().isoformat()})",
    )
    report(
        "\n".join(table),
        args.update_results,
        "analyze",
        "Facts pass (`benchmarks/analyze.py`)",
        "python benchmarks/analyze.py --update-results",
        load,
        [headline],
    )


if __name__ == "__main__":
    main()
