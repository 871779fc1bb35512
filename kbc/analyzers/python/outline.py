"""A Python file's definitions from ``ast``: what the first index is cut at.

The facts pass (:mod:`kbc.analyzers.python.analyze`) parses with libcst, about ten times
slower than CPython's own parser. The first index a build publishes needs only where each
definition starts and ends, its kind, qualified name and signature; they are read here the
way the facts pass reads them (a definition starts at its first decorator and ends at its
last line of code or of the comments its body owns; a signature is its parameters as
written, on one line; an ``@overload`` stub gives way to its implementation), so the units
of the first index are, file for file, those the facts cut, wherever the two readings
agree (the facts pass cuts the index again once it is done).

Never raises: a file CPython cannot parse has no outline (None), and is cut into line
windows as a file the facts pass fails on is.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from kbc.analyzers.python.syntax import squash

_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


@dataclass(frozen=True, slots=True)
class Outlined:
    """One definition as the facts pass names it (its :class:`kbc.domain.models.Symbol`'s
    qname, name, kind, span, signature and whether it is async)."""

    qname: str
    name: str
    kind: str  # class | function | method
    start: int
    end: int
    signature: str
    is_async: bool
    overload: bool = False


def outline(text: str, module: str) -> tuple[Outlined, ...] | None:
    """The definitions of ``text`` (the module ``module``), in source order; None when
    CPython does not parse it."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    try:
        reader = _Reader(text)
        out: list[Outlined] = []
        reader.walk(tree.body, module, "module", out)
    except RecursionError:
        return None
    return _without_overload_stubs(out)


def _without_overload_stubs(found: list[Outlined]) -> tuple[Outlined, ...]:
    """As the facts pass: where a file holds a function's implementation, its ``@overload``
    stubs (and what is nested in them) are not definitions."""
    implemented = {d.qname for d in found if d.kind != "class" and not d.overload}
    spans = [(d.start, d.end) for d in found if d.overload and d.qname in implemented]
    if not spans:
        return tuple(found)
    return tuple(d for d in found if not any(start <= d.start and d.end <= end for start, end in spans))


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = _LINES.findall(text)
        self.offsets = [0]
        for line in self.lines:
            self.offsets.append(self.offsets[-1] + len(line))

    def at(self, line: int, column: int) -> int:
        """The character offset in the text of ``column`` (UTF-8 bytes, as ast counts) on
        ``line`` (1-based)."""
        if line - 1 >= len(self.lines):
            return len(self.text)
        written = self.lines[line - 1]
        if not written.isascii():
            column = len(written.encode("utf-8")[:column].decode("utf-8", errors="ignore"))
        return self.offsets[line - 1] + column

    def segment(self, node: ast.expr, spare: tuple[int, int] = (0, 0)) -> str:
        """The expression as written, with the parentheses around it (libcst's node holds
        them; ast's does not), but for ``spare`` (before, after) that belong to what holds it."""
        end_line, end_column = node.end_lineno or node.lineno, node.end_col_offset or 0
        start, end = self.at(node.lineno, node.col_offset), self.at(end_line, end_column)
        text = self.text
        opening: list[int] = []
        closing: list[int] = []
        at = start
        while True:
            while at > 0 and text[at - 1].isspace():
                at -= 1
            if at == 0 or text[at - 1] != "(":
                break
            at -= 1
            opening.append(at)
        at = end
        while True:
            while at < len(text) and text[at].isspace():
                at += 1
            if at == len(text) or text[at] != ")":
                break
            closing.append(at)
            at += 1
        layers = min(len(opening) - spare[0], len(closing) - spare[1])
        if layers > 0:
            start, end = opening[layers - 1], closing[layers - 1] + 1
        return text[start:end]

    def walk(self, body: list[ast.stmt], qname: str, kind: str, out: list[Outlined]) -> None:
        for node in body:
            if isinstance(node, _Def):
                out.append(self.definition(node, qname, kind))
                inner = "class" if isinstance(node, ast.ClassDef) else "function"
                self.walk(node.body, f"{qname}.{node.name}", inner, out)
                continue
            # in the order written: a try's handlers come before its else and finally
            blocks = [getattr(node, "body", None), *(h.body for h in getattr(node, "handlers", ()))]
            blocks += [getattr(node, "orelse", None), getattr(node, "finalbody", None)]
            blocks += [case.body for case in getattr(node, "cases", ())]
            for nested in blocks:
                if isinstance(nested, list):
                    self.walk(nested, qname, kind, out)

    def definition(self, node: _Def, outer: str, outer_kind: str) -> Outlined:
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        if isinstance(node, ast.ClassDef):
            kind, is_async = "class", False
            written = []
            arguments: list[ast.expr | ast.keyword] = [*node.bases, *node.keywords]
            for place, argument in enumerate(arguments):
                # the class's own parentheses around its first and last argument are not theirs
                spare = (int(place == 0), int(place == len(arguments) - 1))
                if isinstance(argument, ast.keyword):
                    star = "**" if argument.arg is None else f"{argument.arg}="
                    written.append(star + self.squashed(argument.value, 80, spare))
                elif isinstance(argument, ast.Starred):
                    written.append("*" + self.squashed(argument.value, 80, spare))
                else:
                    written.append(self.squashed(argument, 80, spare))
            signature = "(" + ", ".join(written) + ")" if written else ""
        else:
            kind = "method" if outer_kind == "class" else "function"
            is_async = isinstance(node, ast.AsyncFunctionDef)
            signature = "(" + squash(self.parameters(node), 400) + ")"
            if node.returns is not None:
                signature += " -> " + self.squashed(node.returns, 120)
        overload = any(self.segment(d).rsplit(".", 1)[-1] == "overload" for d in node.decorator_list)
        return Outlined(
            f"{outer}.{node.name}",
            node.name,
            kind,
            start,
            self.end(node, start),
            signature,
            is_async,
            overload,
        )

    def squashed(self, node: ast.expr, limit: int, spare: tuple[int, int] = (0, 0)) -> str:
        return squash(self.segment(node, spare), limit)

    def end(self, node: _Def, start: int) -> int:
        """The definition's last line: its last statement's, or the last comment line indented
        as its body is among the comment and blank lines after it (its body owns them, and
        any less indented comment line before that one)."""
        last = node.end_lineno or node.lineno
        first = node.body[0]
        if first.lineno == node.lineno:  # `def f(): ...` on one line: no block of its own
            return max(last, start)
        indent = self.indent(first.lineno)
        end = last
        for number in range(last + 1, len(self.lines) + 1):
            written = self.lines[number - 1]
            stripped = written.strip()
            if not stripped:
                continue
            if not stripped.startswith("#"):
                break
            if self.indent(number) >= indent:
                end = number
        return max(end, start)

    def indent(self, line: int) -> int:
        written = self.lines[line - 1]
        return len(written) - len(written.lstrip(" \t\f"))

    def parameters(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
        """The parameters as written between the parentheses, less the whitespace and
        comments before the first (libcst keeps those apart from the parameters)."""
        text = self.text
        opening = text.find("(", self.at(node.lineno, node.col_offset))
        if opening < 0:
            return ""
        closing = _closing(text, opening)
        inside = text[opening + 1 : closing]
        while True:
            trimmed = inside.lstrip()
            if trimmed.startswith("#"):
                newline = re.search(r"\r\n|\r|\n", trimmed)
                trimmed = trimmed[newline.end() :] if newline else ""
            if trimmed == inside:
                return inside
            inside = trimmed


def _closing(text: str, opening: int) -> int:
    """The offset of the bracket closing the one at ``opening``, past strings and comments."""
    depth = 0
    at = opening
    size = len(text)
    while at < size:
        char = text[at]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return at
        elif char == "#":
            newline = text.find("\n", at)
            at = size if newline < 0 else newline
            continue
        elif char in "'\"":
            quote = text[at : at + 3] if text[at : at + 3] in ("'''", '"""') else char
            at += len(quote)
            while at < size and not text.startswith(quote, at):
                at += 2 if text[at] == "\\" else 1
            at += len(quote)
            continue
        at += 1
    return size
