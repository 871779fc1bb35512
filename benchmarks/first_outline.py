"""Do the definitions ``ast`` reads cut a corpus where libcst's facts cut it?

    python benchmarks/first_outline.py DIR [DIR ...] [--every N] [--update-results]

For every Python file under each DIR (every Nth, in path order), the facts pass's symbols
(:func:`kbc.analyzers.python.analyze.analyze_source`) and the first index's definitions
(:func:`kbc.analyzers.python.outline.outline`) are compared on what the chunker reads of
them: qualified name, kind, span, signature, async. A file libcst fails on and CPython
parses (or the reverse) counts as differing. Prints, per corpus, the files that agree and
the CPU seconds of each reading, and the first files that differ.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from results_file import update_section
from timing import clock

from kbc.analyzers.python.analyze import analyze_source
from kbc.analyzers.python.encoding import decode_source
from kbc.analyzers.python.outline import outline
from kbc.domain.models import AnalysisOk, AnalysisTask


def compare(root: Path, every: int) -> dict[str, Any]:
    files = sorted(p for p in root.rglob("*.py") if not {".git", ".kbc"} & set(p.parts))[::every]
    same, differ = 0, []
    libcst_cpu = ast_cpu = 0.0
    lines = 0
    for path in files:
        data = path.read_bytes()
        lines += data.count(b"\n")
        name = str(path.relative_to(root))
        with clock() as facts_read:
            result = analyze_source(data, AnalysisTask(name, str(path), "m", False, (), True))
        libcst_cpu += facts_read.cpu
        text, _ = decode_source(data)
        with clock() as outlined:
            found = outline(text, "m")
        ast_cpu += outlined.cpu
        facts = (
            [
                (s.qname, s.kind, s.start_line, s.end_line, s.signature, s.is_async)
                for s in result.facts.symbols
            ]
            if isinstance(result, AnalysisOk)
            else None
        )
        read = (
            None
            if found is None
            else [(d.qname, d.kind, d.start, d.end, d.signature, d.is_async) for d in found]
        )
        if facts == read:
            same += 1
        else:
            differ.append(name)
    return {
        "corpus": root.name,
        "files": len(files),
        "lines": lines,
        "same": same,
        "differ": differ,
        "libcst_cpu": libcst_cpu,
        "ast_cpu": ast_cpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", type=Path, nargs="+")
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--update-results", action="store_true")
    args = parser.parse_args()
    out = [
        "The definitions `ast` reads against the facts' (libcst's), file by file: qualified name, "
        "kind, span, signature, async (what the chunker cuts at); CPU seconds of each reading in "
        "one process, the facts pass's including its redaction:",
        "",
        "| corpus | Python files | lines | same definitions | differ | facts (libcst), CPU s "
        "| `ast` outline, CPU s | ÷ |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for root in args.roots:
        row = compare(root.resolve(), args.every)
        differ, libcst_cpu, ast_cpu = row["differ"], float(row["libcst_cpu"]), float(row["ast_cpu"])
        assert isinstance(differ, list)
        sampled = f" (every {args.every}th file)" if args.every > 1 else ""
        out.append(
            f"| {row['corpus']}{sampled} | {row['files']:,} | {row['lines']:,} | {row['same']:,} "
            f"| {len(differ)} | {libcst_cpu:.1f} | {ast_cpu:.1f} | {libcst_cpu / max(ast_cpu, 1e-9):.1f}× |"
        )
        for name in differ[:10]:
            out.append(f"|  differs: `{name}` | | | | | | | |")
    text = "\n".join(out)
    print(text)
    if args.update_results:
        update_section(
            "first-outline",
            "Definitions from `ast` against the facts' (`benchmarks/first_outline.py`)",
            text,
            "python benchmarks/first_outline.py "
            + " ".join(str(r) for r in args.roots)
            + " --update-results",
        )


if __name__ == "__main__":
    main()
