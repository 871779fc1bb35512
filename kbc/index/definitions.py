"""Cut parsed code at the definitions the facts found.

Every function and method is a unit with its exact span (nested definitions
stay inside it); a class gets an outline unit (its header, docstring and
fields, with its members' signatures as indexed context) and its members are
units of their own; the module prelude (docstring, imports, constants before
the first definition) and any other module-level code are units too. A
definition longer than the limit is split at statement boundaries, each later
part carrying the definition's signature as its breadcrumb.

Every line of the file is in exactly one unit: blank lines go to the unit
before them, and comment lines directly above a definition go with it. No
unit holds more than ``limit`` lines before its trailing blank lines.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass, field

UnitKind = str  # prelude | module | class | function | method | constant | window
CRUMB_SIGNATURE = 60  # a longer signature is shortened in breadcrumbs


def definitions_version() -> str:
    """The versions of the analyzers that find the definitions code is cut at: a file is cut
    again when what reads it changes, though the file did not."""
    from kbc.analyzers.code.languages import CODE_ANALYZER_VERSION
    from kbc.analyzers.python.analyze import ANALYZER_VERSION

    return f"{ANALYZER_VERSION}+code-{CODE_ANALYZER_VERSION}"


@dataclass(frozen=True, slots=True)
class Definition:
    """What the chunker needs of a symbol (picklable, for the worker pool)."""

    qname: str
    name: str
    kind: str  # class | function | method
    start: int
    end: int
    signature: str = ""  # as in the facts: "(self, x) -> int", or a class's "(Base)"
    is_async: bool = False
    language: str = "python"  # other languages' signatures are their declarations as written

    def header(self) -> str:
        if self.language != "python":
            return self.signature or self.name
        if self.kind == "class":
            return f"class {self.name}{self.signature}"
        return f"{'async ' if self.is_async else ''}def {self.name}{self.signature}"

    def crumb(self) -> str:
        """The header short enough for a breadcrumb: a long signature becomes ``(…)``."""
        if self.language != "python":
            written = self.signature or self.name
            return written if len(written) <= CRUMB_SIGNATURE * 2 else written[: CRUMB_SIGNATURE * 2] + "…"
        signature = self.signature if len(self.signature) <= CRUMB_SIGNATURE else "(…)"
        if self.kind == "class":
            return f"class {self.name}{signature}"
        return f"{'async ' if self.is_async else ''}def {self.name}{signature}"


@dataclass(slots=True)
class Piece:
    start: int
    end: int
    unit: UnitKind
    qname: str = ""  # the definition the piece is (or belongs to); "" at module level
    heading: str = ""  # breadcrumb of the enclosing definitions
    context: str = ""  # indexed with the text, never shown: a class outline's member signatures
    key: str = ""  # identity within the file, stable when other code moves
    symbols: tuple[str, ...] = ()


@dataclass(slots=True)
class _Node:
    definition: Definition
    children: list[_Node] = field(default_factory=list)


def _tree(definitions: Sequence[Definition], last: int) -> list[_Node]:
    """Definitions nested by their spans (which the facts guarantee are well nested)."""
    roots: list[_Node] = []
    stack: list[_Node] = []
    valid = [d for d in definitions if 1 <= d.start <= d.end <= last]
    for definition in sorted(valid, key=lambda d: (d.start, -d.end, d.qname)):
        while stack and stack[-1].definition.end < definition.start:
            stack.pop()
        node = _Node(definition)
        if stack and definition.end <= stack[-1].definition.end:
            stack[-1].children.append(node)
        elif stack:  # overlaps without nesting: not from a parser; treat as a sibling
            stack.pop()
            (stack[-1].children if stack else roots).append(node)
        else:
            roots.append(node)
        stack.append(node)
    return roots


def _nested(node: _Node) -> list[str]:
    out = [node.definition.qname]
    for child in node.children:
        out.extend(_nested(child))
    return out


# How a comment line starts, where it is not Python's "#": C-like languages, their doc
# comments and block comments' inner lines, and Rust's attributes (`#[derive(...)]`).
_C_COMMENTS = ("//", "/*", "*", "#[", "@")


class _Layout:
    def __init__(self, lines: Sequence[str], python: bool = True) -> None:
        self.lines = lines
        self.pieces: list[Piece] = []
        self.comments: tuple[str, ...] = ("#",) if python else _C_COMMENTS

    def blank(self, number: int) -> bool:
        return not self.lines[number - 1].strip()

    def comment(self, number: int) -> bool:
        return self.lines[number - 1].lstrip().startswith(self.comments)

    def gap(self, start: int, end: int, unit: UnitKind, qname: str, heading: str, key: str) -> None:
        """Lines between definitions: a piece when any holds code, else left to the neighbours."""
        while start <= end and self.blank(start):
            start += 1
        if start <= end:
            self.pieces.append(Piece(start, end, unit, qname, heading, key=key))

    def region(
        self,
        start: int,
        end: int,
        nodes: Sequence[_Node],
        crumbs: tuple[str, ...],
        owner: str,
        gap_unit: UnitKind,
    ) -> None:
        cursor = start
        for node in nodes:
            definition = node.definition
            first = definition.start
            while first - 1 >= cursor and self.comment(first - 1):  # its comment block
                first -= 1
            self.gap(
                cursor, first - 1, gap_unit, owner, " > ".join(crumbs), f"{owner}:before:{definition.qname}"
            )
            heading = " > ".join(crumbs)
            if definition.kind == "class":  # an outline: its members are units of their own
                members = node.children
                head_end = members[0].definition.start - 1 if members else definition.end
                while members and head_end > first and self.comment(head_end):
                    head_end -= 1  # a comment above the first member goes with it
                outline = "\n".join(m.definition.header() for m in members)
                self.pieces.append(
                    Piece(
                        first,
                        head_end,
                        "class",
                        definition.qname,
                        heading,
                        outline,
                        definition.qname,
                        (definition.qname,),
                    )
                )
                if members:
                    self.region(
                        head_end + 1,
                        definition.end,
                        members,
                        (*crumbs, definition.crumb()),
                        definition.qname,
                        "class",
                    )
            else:
                member = definition.kind == "method" or bool(crumbs) and crumbs[-1].startswith("class ")
                unit = "constant" if definition.kind == "constant" else "method" if member else "function"
                self.pieces.append(
                    Piece(
                        first,
                        definition.end,
                        unit,
                        definition.qname,
                        heading,
                        "",
                        definition.qname,
                        tuple(_nested(node)),
                    )
                )
            cursor = definition.end + 1
        self.gap(cursor, end, gap_unit, owner, " > ".join(crumbs), f"{owner}:end")


def _fill_blanks(pieces: list[Piece], last: int) -> list[Piece]:
    """Give every line no piece holds (only blank lines are left) to the piece before it."""
    if not pieces:
        return [Piece(1, last, "module", key="module")] if last else []
    pieces.sort(key=lambda p: p.start)
    pieces[0].start = 1
    for before, after in zip(pieces, pieces[1:], strict=False):
        before.end = after.start - 1
    pieces[-1].end = last
    return pieces


def _statements(text: str) -> dict[int, int] | None:
    """Lines that start a logical line (or hold only a comment), with their indentation;
    None when the text does not tokenize."""
    starts: dict[int, int] = {}
    fresh = True
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            kind = token.type
            if kind in (tokenize.NEWLINE, tokenize.NL):
                fresh = True
                continue
            if kind in (tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
                continue
            if fresh:
                starts.setdefault(token.start[0], token.start[1])
                fresh = False
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    return starts


def _long_statements(lines: Sequence[str], pieces: Sequence[Piece], limit: int) -> dict[int, int] | None:
    """:func:`_statements` of the file's lines, read only where a piece is longer than
    ``limit`` (a piece begins and ends with a statement, so its own lines tokenize as they do in
    the file: tokenizing whole files for a few long pieces cost sympy's chunk pass a seventh
    of its CPU); the whole file when a piece does not tokenize on its own."""
    starts: dict[int, int] = {}
    for piece in pieces:
        if piece.end - piece.start + 1 <= limit:
            continue
        found = _statements("".join(lines[piece.start - 1 : piece.end]))
        if found is None:
            return _statements("".join(lines))
        starts.update({number + piece.start - 1: column for number, column in found.items()})
    return starts


def _cut(start: int, content_end: int, limit: int, statements: dict[int, int]) -> list[int]:
    """Where parts of ``start..content_end`` begin: at the shallowest statement start in the
    second half of each window, else any statement start, else hard at the limit."""
    begins = [start]
    while content_end - begins[-1] + 1 > limit:
        first = begins[-1]
        window = [n for n in range(first + max(1, limit // 2), first + limit + 1) if n in statements]
        if not window:
            window = [n for n in range(first + 1, first + limit + 1) if n in statements]
        if window:
            shallowest = min(statements[n] for n in window)
            begins.append(max(n for n in window if statements[n] == shallowest))
        else:
            begins.append(first + limit)
    return begins


def _split(
    piece: Piece,
    limit: int,
    lines: Sequence[str],
    statements: dict[int, int] | None,
    signatures: dict[str, str],
) -> list[Piece]:
    content_end = piece.end
    while content_end > piece.start and not lines[content_end - 1].strip():
        content_end -= 1
    if content_end - piece.start + 1 <= limit:
        return [piece]
    begins = _cut(piece.start, content_end, limit, statements or {})
    carried = signatures.get(piece.qname, "") if piece.unit in ("function", "method") else ""
    later = " > ".join(p for p in (piece.heading, carried) if p)
    parts = []
    for index, first in enumerate(begins):
        end = begins[index + 1] - 1 if index + 1 < len(begins) else piece.end
        parts.append(
            Piece(
                first,
                end,
                piece.unit,
                piece.qname,
                piece.heading if index == 0 else later,
                piece.context if index == 0 else "",
                piece.key if index == 0 else f"{piece.key}#{index + 1}",
                piece.symbols if index == 0 else (),
            )
        )
    return parts


def _indents(lines: Sequence[str]) -> dict[int, int]:
    """Where a part of a long definition may begin, in a language other than Python: any line
    holding code, by its indentation (a closing brace ends a block, it begins nothing)."""
    return {
        number: len(line) - len(line.lstrip())
        for number, line in enumerate(lines, start=1)
        if line.strip() and not line.lstrip().startswith(("}", ")", "]"))
    }


def definition_pieces(
    lines: Sequence[str], definitions: Sequence[Definition], limit: int, python: bool = True
) -> list[Piece]:
    """The file's pieces in line order, covering lines 1..len(lines) exactly once; ``python``:
    the file is Python (else its comments and statements are read as a C-like language's)."""
    last = len(lines)
    layout = _Layout(lines, python)
    roots = _tree(definitions, last)
    layout.region(1, last, roots, (), "", "module")
    first = layout.pieces[0] if layout.pieces else None
    if first is not None and first.unit == "module" and (not roots or first.end < roots[0].definition.start):
        first.unit, first.key = "prelude", "prelude"
    pieces = _fill_blanks(layout.pieces, last)
    if any(p.end - p.start + 1 > limit for p in pieces):
        statements = _long_statements(lines, pieces, limit) if python else _indents(lines)
        signatures = {d.qname: d.crumb() for d in definitions}
        pieces = [part for piece in pieces for part in _split(piece, limit, lines, statements, signatures)]
    return pieces
