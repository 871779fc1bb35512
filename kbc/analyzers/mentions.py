"""Code a Markdown document mentions: its backticked spans outside fenced blocks, what
looks like a code name among them, and the names a Python file binds by any statement.

Whether the code still has what a mention names is judged over the linked facts, where
names are resolved (:mod:`kbc.graph.mentions`); ``kbc.analyzers.drift`` asks it through
:class:`MentionJudge` for its ``missing_symbols`` reason.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

# -- mentions -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Mention:
    """A backticked span of a document's body."""

    text: str  # the span's content, stripped
    line: int  # 1-based line in the file


_FENCE = re.compile(r"^[ \t]*(?:>[ \t]*)*(`{3,}|~{3,})(.*)$")
_TICKS = re.compile(r"`+")


def code_spans(body: str, first_line: int = 1) -> list[Mention]:
    """Inline code spans of ``body``, outside fenced code blocks, in order.

    A span opens with a run of backticks and closes with the next run of the
    same length on the same line; an unmatched run is literal text.
    """
    spans: list[Mention] = []
    fence = ""
    for number, line in enumerate(body.splitlines(), first_line):
        match = _FENCE.match(line)
        if fence:
            if (
                match
                and match.group(1)[0] == fence[0]
                and len(match.group(1)) >= len(fence)
                and not match.group(2).strip()
            ):
                fence = ""
            continue
        if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            fence = match.group(1)
            continue
        runs = list(_TICKS.finditer(line))
        k = 0
        while k < len(runs):
            opening = runs[k]
            closing = next((m for m in runs[k + 1 :] if len(m.group()) == len(opening.group())), None)
            if closing is None:
                k += 1
                continue
            text = line[opening.end() : closing.start()].strip()
            if text:
                spans.append(Mention(text, number))
            k = runs.index(closing) + 1
    return spans


# -- changelogs --------------------------------------------------------------------

_CHANGELOG = re.compile(
    r"(^|/)(change[s_-]?log|changes|history|news|releases?|release[s_-]?notes?|whats_?new)"
    r"(\.[a-z]+)?$|(^|/)(changelog|changes|releases?|release[_-]?notes|whatsnew)(\.d)?/",
    re.IGNORECASE,
)
# An entry that says its names were taken away: "Replace deprecated `utcnow()`", "Removed
# `Foo.bar`", "`old()` is renamed to `new()`", "dropped", "no longer", "in favour of".
_TAKEN_AWAY = re.compile(
    r"\b(remov|replac|deprecat|renam|drop|delet|retir|obsolet|supersed|no longer|instead of|"
    r"in favou?r of)",
    re.IGNORECASE,
)
_ENTRY_START = re.compile(r"^\s{0,3}([-*+]|\d+[.)]|#{1,6})\s")


def is_changelog(path: str) -> bool:
    """A changelog or release notes (``CHANGELOG.md``, ``HISTORY.rst``, ``NEWS``,
    ``docs/changes.md``, ``changelog.d/123.md``): a history of the code, not a description of it."""
    return bool(_CHANGELOG.search(path))


def taken_away(body: str, first_line: int = 1) -> frozenset[str]:
    """The mentions (as written) of the entries of a changelog that say what they name was
    removed, replaced, renamed or deprecated. An entry is a list item or paragraph, with the
    lines that continue it."""
    entries: list[list[str]] = [[]]
    for line in body.splitlines():
        if not line.strip() or _ENTRY_START.match(line):
            entries.append([])
        entries[-1].append(line)
    found: set[str] = set()
    for entry in entries:
        text = "\n".join(entry)
        if _TAKEN_AWAY.search(text):
            found.update(m.text for m in code_spans(text, first_line))
    return frozenset(found)


# -- code names ---------------------------------------------------------------------

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
DOTTED = re.compile(rf"{_NAME}(?:\.{_NAME})*")
BUILTINS = frozenset(dir(builtins))
# A dotted span ending in one of these names a file ("kbc.toml"), not code.
FILE_SUFFIXES = frozenset(
    {
        "py",
        "pyi",
        "pyc",
        "md",
        "rst",
        "txt",
        "toml",
        "cfg",
        "ini",
        "json",
        "jsonl",
        "yaml",
        "yml",
        "lock",
        "html",
        "css",
        "js",
        "ts",
        "csv",
        "tsv",
        "svg",
        "po",
        "pot",
        "sh",
        "log",
        "db",
        "sqlite",
        "env",
        "xml",
        "zip",
        "gz",
        "whl",
    }
)


class MentionJudge(Protocol):
    """What judges a document's mentions against the code (:class:`kbc.graph.mentions.MentionChecker`
    over the linked facts)."""

    def missing(self, mentions: Iterable[Mention]) -> tuple[str, ...]:
        """The mentions (as written) that name code the facts no longer hold, sorted and unique."""
        ...


def _target_names(node: ast.expr) -> Iterator[str]:
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, (ast.Tuple, ast.List)):
        for element in node.elts:
            yield from _target_names(element)
    elif isinstance(node, ast.Starred):
        yield from _target_names(node.value)


def scope_bindings(source: str) -> dict[str, frozenset[str]]:
    """Names bound at module level ("") and in each class body ("Outer.Inner"), by any statement."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    found: dict[str, set[str]] = {}

    def visit(body: Sequence[ast.stmt], scope: str) -> None:
        names = found.setdefault(scope, set())
        for node in body:
            if isinstance(node, ast.ClassDef):
                names.add(node.name)
                visit(node.body, f"{scope}.{node.name}" if scope else node.name)
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names.add(node.name)
                continue
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    names.update(_target_names(target))
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
                names.update(_target_names(node.target))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
            elif isinstance(alias := getattr(node, "name", None), ast.Name):  # `type X = ...` (3.12)
                names.add(alias.id)
            for attribute in ("body", "orelse", "finalbody"):
                nested = getattr(node, attribute, None)
                if isinstance(nested, list):
                    visit(nested, scope)
            for part in [*getattr(node, "handlers", ()), *getattr(node, "cases", ())]:
                visit(part.body, scope)

    visit(tree.body, "")
    return {scope: frozenset(names) for scope, names in found.items()}
