"""The share of a project's files, in each language read through tree-sitter, that parse
without a syntax error.

    python benchmarks/parse_share.py ROOT [ROOT ...] [--markdown]

Every file under the ROOTs (``node_modules`` and ``.git`` left out) whose language discovery
names one kbc reads through tree-sitter (TypeScript, TSX, JavaScript, Go, Rust, Java, C,
C++), declaration files (``.d.ts``, ``.d.mts``, ``.d.cts``) in a row of their own, is parsed
three ways: by the grammar kbc pins (``tree_sitter_language_pack``, bare), by the
per-language grammar wheels when they are importable (``tree_sitter_typescript``,
``tree_sitter_go``, ...; "–" otherwise), and as kbc reads it
(:func:`kbc.analyzers.code.grammars.parse`: the pinned grammar, and the syntax it lacks
blanked out where that parses better). A file counts when its tree has no error node.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from kbc.analyzers.code.grammars import parse, parser_for
from kbc.analyzers.code.languages import CODE_LANGUAGES
from kbc.analyzers.discover import LANGUAGE_HEAD, language_of

# language -> the grammar wheel's module and the function of it that gives the language
WHEELS = {
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "javascript": ("tree_sitter_javascript", "language"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
}
DECLARATIONS = (".d.ts", ".d.mts", ".d.cts")


def wheel_parsers() -> dict[str, Any]:
    """Parsers of the per-language grammar wheels that are installed, by language."""
    try:
        import tree_sitter
    except ImportError:
        return {}
    found: dict[str, Any] = {}
    for language, (module_name, function) in WHEELS.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        found[language] = tree_sitter.Parser(tree_sitter.Language(getattr(module, function)()))
    return found


def collect(root: Path) -> dict[str, list[bytes]]:
    """Row (a language, or its declaration files) -> the bytes of each of its files."""
    found: dict[str, list[bytes]] = defaultdict(list)
    for file in sorted(root.rglob("*")):
        if not file.is_file() or {"node_modules", ".git", ".kbc"} & set(file.parts):
            continue
        data = file.read_bytes()
        language = language_of(file.name, data[:LANGUAGE_HEAD])
        if language in CODE_LANGUAGES:
            row = f"{language} (declarations)" if file.name.endswith(DECLARATIONS) else language
            found[row].append(data)
    return found


def share(clean: int, files: int) -> str:
    return f"{clean} ({clean / files:.1%})" if files else "–"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", nargs="+", type=Path)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    wheels = wheel_parsers()
    head = ("project", "language", "files", "pinned grammar", "grammar wheels", "kbc")
    rows = []
    for root in args.roots:
        for row, files in sorted(collect(root).items()):
            language = row.split(" ")[0]
            pinned = sum(not parser_for(language).parse(data).root_node.has_error for data in files)
            wheel = wheels.get(language)
            wheeled = (
                share(sum(not wheel.parse(data).root_node.has_error for data in files), len(files))
                if wheel is not None
                else "–"
            )
            read = sum(not parse(language, data).root_node.has_error for data in files)
            rows.append(
                (root.name, row, str(len(files)), share(pinned, len(files)), wheeled, share(read, len(files)))
            )
    if not rows:
        print("no file under the roots in a language read through tree-sitter", file=sys.stderr)
        return 1
    if args.markdown:
        print(
            "| project | language | files | parse clean, pinned grammar | grammar wheels | as kbc reads it |"
        )
        print("| --- | --- | ---: | ---: | ---: | ---: |")
        for project, row, files, pinned_share, wheel_share, read_share in rows:
            print(f"| {project} | {row} | {files} | {pinned_share} | {wheel_share} | {read_share} |")
    else:
        print("\t".join(head))
        for found in rows:
            print("\t".join(found))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
