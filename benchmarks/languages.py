"""The facts of languages read through tree-sitter, against the grammar's bare parse.

    python benchmarks/languages.py ROOT [ROOT ...] [--rounds 3] [--markdown]

Every file under the ROOTs whose language kbc reads through tree-sitter (by discovery's rule:
its suffix, and a `.h` header's opening) is read once into memory; then, in each round, the
files of each language are parsed bare (``tree_sitter_language_pack.get_parser(...).parse``)
and analyzed (``kbc.analyzers.code.analyze.analyze_code``: the parse, definitions, imports,
calls; then again with the credential screen a build runs only on files its sweep flagged),
in an order rotated from round to round, in this one process; the first round also pays for
loading the grammars. Times are the process's CPU seconds (``timing.clock``), so other work on
the machine does not weigh on one side of a ratio more than the other.
Per language: files, lines, symbols, calls found and resolved within the ROOTs
(``kbc.analyzers.code.resolve``), files with syntax errors, the median seconds of each and
their ratio. Corpora used in benchmarks/RESULTS.md: benchmarks/polyglot_corpus.py's
(TypeScript, Go, Rust, Java), lz4 4.3.3's sdist (its C library) and Debian's ``googletest``
package (C++ under usr/src).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from timing import interleaved, median

from kbc.analyzers.code.analyze import analyze_code, parser_for
from kbc.analyzers.code.languages import CODE_LANGUAGES, code_module
from kbc.analyzers.code.resolve import link_code
from kbc.analyzers.discover import LANGUAGE_HEAD, language_of
from kbc.domain.models import AnalysisTask, FileFacts


def collect(roots: list[Path]) -> dict[str, list[tuple[str, bytes]]]:
    """Language -> (path, bytes) of every file of it under ``roots``."""
    found: dict[str, list[tuple[str, bytes]]] = defaultdict(list)
    for root in roots:
        for file in sorted(root.rglob("*")):
            if not file.is_file() or ".git" in file.parts or ".kbc" in file.parts:
                continue
            data = file.read_bytes()
            language = language_of(file.name, data[:LANGUAGE_HEAD])
            if language in CODE_LANGUAGES:
                found[language].append((f"{root.name}/{file.relative_to(root).as_posix()}", data))
    return found


def parse_all(language: str, files: list[tuple[str, bytes]]) -> None:
    parser = parser_for(language)
    for _, data in files:
        parser.parse(data)


def analyze_all(language: str, files: list[tuple[str, bytes]], screen: bool = False) -> list[FileFacts]:
    """``screen``: with the credential screen, as for a file the build's sweep flagged (a
    build hands the analyzer the sweep's verdict, and a clean file is not screened again)."""
    return [
        analyze_code(
            data, AnalysisTask(path, path, code_module(path), False, clean=not screen, language=language)
        )
        for path, data in files
    ]


def readings(
    language: str, files: list[tuple[str, bytes]], facts: list[FileFacts]
) -> dict[str, Callable[[], object]]:
    """The three readings of one language's files, timed in rounds; ``facts`` keeps the
    facts of the last."""

    def analyzed() -> None:
        facts[:] = analyze_all(language, files)

    return {
        "parse": lambda: parse_all(language, files),
        "facts": analyzed,
        "screened": lambda: analyze_all(language, files, screen=True),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", nargs="+", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    corpus = collect(args.roots)
    if not corpus:
        print("no file of a language read through tree-sitter under the roots", file=sys.stderr)
        return 1
    parse_all(next(iter(corpus)), corpus[next(iter(corpus))][:1])  # the grammars' own loading, once
    rows = []
    for language in sorted(corpus):
        files = corpus[language]
        facts: list[FileFacts] = []
        samples = interleaved(readings(language, files, facts), args.rounds)
        linked = link_code(facts)
        calls = [c for f in linked.values() for c in f.calls]
        parse, analyze = median(samples["parse"], cpu=True), median(samples["facts"], cpu=True)
        screened = median(samples["screened"], cpu=True)
        rows.append(
            (
                language,
                len(files),
                sum(f.lines for f in facts),
                sum(len(f.symbols) for f in facts),
                len(calls),
                sum(bool(c.target) for c in calls),
                sum(bool(f.warnings) for f in facts),
                parse,
                analyze,
                analyze / parse if parse else 0.0,
                screened / parse if parse else 0.0,
            )
        )
    head = (
        "language",
        "files",
        "lines",
        "symbols",
        "calls",
        "resolved",
        "syntax errors",
        "parse s",
        "facts s",
        "facts / parse",
        "with the screen / parse",
    )
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("| --- |" + " ---: |" * (len(head) - 1))
        for row in rows:
            print(
                f"| {row[0]} | {row[1]} | {row[2]:,} | {row[3]:,} | {row[4]:,} | {row[5]:,} | {row[6]} "
                f"| {row[7]:.3f} | {row[8]:.3f} | {row[9]:.2f}× | {row[10]:.2f}× |"
            )
    else:
        print("\t".join(head))
        for row in rows:
            print("\t".join(str(round(v, 3)) if isinstance(v, float) else str(v) for v in row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
