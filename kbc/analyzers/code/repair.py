"""Syntax TypeScript has and its tree-sitter grammar lacks, mended in place so the rest of the
file parses.

tree-sitter-typescript (the grammar of tree-sitter-language-pack 0.13.0, the same as its
newest release, 0.23.2) has no rule for two things real projects write all the time:

- variance annotations on type parameters (TypeScript 4.7: ``interface Schema<out O, in I>``,
  ``<in out T>``): where a type parameter list fails to parse, its ``in`` and ``out``
  modifiers are overwritten with spaces (they say nothing kbc records);
- a generic call signature opening a line of an object type or interface after another
  member with no ``;`` between them (``{ (a: A): B`` then ``<T>(t: T): T }``, the overloads
  of every ``dual`` API): the grammar reads the ``<T>`` as the previous member's type
  arguments. Where an error is, the last space of such a line's indentation becomes the
  ``;`` TypeScript infers there.

Bytes keep their place, so every span, line and signature (read from the original bytes)
stays exact. Each mending is kept only when the file's tree has fewer errors with it; only
files whose tree has errors pay for it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

_VARIANCE = (b"in", b"out")
_WORD = re.compile(rb"[A-Za-z_$][\w$]*")
_GAP = re.compile(rb"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.S)  # whitespace and comments
_NOT_A_NAME = frozenset({b"extends"})  # `<out extends X>`: a parameter named `out`
# A line ending so does not end a member: what follows continues it.
_CONTINUED = (b"{", b"(", b"[", b",", b";", b"=", b"|", b"&", b":", b"<", b"?", b"=>", b"+", b"-", b"*", b"/")


def blank_variance(data: bytes, start: int, end: int, out: bytearray) -> None:
    """Blank, in ``out`` (a copy of ``data``), the variance modifiers of the type parameter
    list ``data[start:end]`` (from its ``<`` to its ``>``)."""
    depth = 0
    at = start
    expect_parameter = False
    while at < end:
        byte = data[at : at + 1]
        if byte in (b'"', b"'", b"`"):
            close = data.find(byte, at + 1, end)
            at = end if close < 0 else close + 1
            continue
        if data.startswith((b"//", b"/*"), at):
            at = _GAP.match(data, at, end).end()  # type: ignore[union-attr]
            continue
        if byte == b"=" and data[at + 1 : at + 2] == b">":  # an arrow, not a closing bracket
            at += 2
            continue
        if byte in (b"<", b"(", b"[", b"{"):
            depth += 1
            expect_parameter = depth == 1 and byte == b"<"
            at += 1
            continue
        if byte in (b">", b")", b"]", b"}"):
            depth -= 1
            at += 1
            continue
        if depth == 1 and byte == b",":
            expect_parameter = True
            at += 1
            continue
        word = _WORD.match(data, at, end)
        if word is None:
            at += 1
            continue
        if expect_parameter and depth == 1:
            at = _modifiers(data, word.start(), end, out)
            expect_parameter = False
            continue
        at = word.end()


def _modifiers(data: bytes, at: int, end: int, out: bytearray) -> int:
    """Blank the ``in`` and ``out`` words (after a ``const``) that start a parameter at ``at``,
    each followed by another name (``out T``, not a parameter named ``out``); returns where
    the parameter's name ends."""
    while True:
        word = _WORD.match(data, at, end)
        if word is None:
            return at
        after = _GAP.match(data, word.end(), end).end()  # type: ignore[union-attr]
        following = _WORD.match(data, after, end)
        if word.group() == b"const" and following is not None:
            at = after
            continue
        if word.group() in _VARIANCE and following is not None and following.group() not in _NOT_A_NAME:
            out[word.start() : word.end()] = b" " * (word.end() - word.start())
            at = after
            continue
        return word.end()


def separate_signatures(data: bytes, rows: set[int], out: bytearray) -> None:
    """In ``out`` (a copy of ``data``), end the member before each of the lines ``rows``
    (0-based) that opens with a generic call signature (``  <T>(t: T): T``) with a ``;`` in
    place of its indentation's last space."""
    lines = data.split(b"\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    for row in sorted(rows):
        if not 0 < row < len(lines):
            continue
        line = lines[row]
        opened = line.lstrip(b" \t")
        indent = len(line) - len(opened)
        if indent == 0 or not opened.startswith(b"<") or opened.startswith((b"<<", b"<=")):
            continue
        before = row - 1
        while before >= 0 and (
            not lines[before].strip() or lines[before].lstrip().startswith((b"//", b"/*", b"*"))
        ):
            before -= 1
        previous = lines[before].rstrip() if before >= 0 else b""
        if previous and not previous.endswith(_CONTINUED):
            out[offsets[row] + indent - 1] = ord(";")


def _errors(tree: Any, error_query: Any) -> list[Any]:
    from tree_sitter import QueryCursor

    return list(QueryCursor(error_query).captures(tree.root_node).get("error", []))


def repaired(language: str, data: bytes, tree: Any, parser: Any, error_query: Any, lists: Any) -> Any:
    """``tree``, or the tree of ``data`` with the syntax its grammar lacks mended, where that
    has fewer errors."""
    if language not in ("typescript", "tsx") or not tree.root_node.has_error:
        return tree
    from tree_sitter import QueryCursor

    current, count = data, len(_errors(tree, error_query))
    out = bytearray(current)
    for node in QueryCursor(lists).captures(tree.root_node).get("list", []):
        if node.has_error:
            blank_variance(current, node.start_byte, node.end_byte, out)
    if out != current:
        tree, current, count = _better(parser, error_query, tree, current, count, out)
    if language == "typescript" and count:  # in TSX a line may open with an element
        rows = {
            row
            for node in _errors(tree, error_query)
            for row in range(int(node.start_point[0]) - 1, int(node.end_point[0]) + 2)
        }
        out = bytearray(current)
        separate_signatures(current, rows, out)
        if out != current:
            tree, current, count = _better(parser, error_query, tree, current, count, out)
    return tree


def mended(
    data: bytes,
    tree: Any,
    parser: Any,
    error_query: Any,
    menders: Sequence[Callable[[bytes, set[int]], bytes]],
) -> Any:
    """``tree``, or the tree of what ``menders`` make of ``data`` (the same bytes at the same
    places, some of them blanked: :mod:`kbc.analyzers.code.mend`). Each mender works on what
    the ones before it left, and its mending is kept unless it leaves the file worse: more of
    its bytes under error nodes (one error over the whole file is worse than two on a line)."""
    current, damage = data, _damage(tree, error_query)
    for mend in menders:
        if not tree.root_node.has_error:
            break
        rows = {
            row
            for node in _errors(tree, error_query)
            for row in range(int(node.start_point[0]), int(node.end_point[0]) + 1)
        }
        out = mend(current, rows)
        if out == current:
            continue
        again = parser.parse(out)
        worse = _damage(again, error_query)
        if worse <= damage:
            tree, current, damage = again, out, worse
    return tree


def _damage(tree: Any, error_query: Any) -> int:
    """How much of a tree's file its errors take: the bytes under its error nodes, and one
    for each of them or of a missing token."""
    if not tree.root_node.has_error:
        return 0
    errors = _errors(tree, error_query)
    return max(1, sum(1 + int(node.end_byte) - int(node.start_byte) for node in errors))


def _better(
    parser: Any, error_query: Any, tree: Any, current: bytes, count: int, mended: bytearray
) -> tuple[Any, bytes, int]:
    """The tree of ``mended`` if it has fewer errors than ``tree``'s ``count``, else as was."""
    again = parser.parse(bytes(mended))
    errors = 0 if not again.root_node.has_error else max(1, len(_errors(again, error_query)))
    if errors < count or not again.root_node.has_error:
        return again, bytes(mended), errors
    return tree, current, count
