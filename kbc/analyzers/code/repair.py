"""Syntax a language has and its grammar lacks, blanked out so the rest of the file parses.

TypeScript 4.7's variance annotations (``interface Schema<out O, in I>``, ``<in out T>``) are
not in tree-sitter-typescript (0.23.2, the newest release): every file that writes one has
syntax errors, and the declarations around them are read wrong. The annotations say nothing
kbc records, so where a type parameter list fails to parse its ``in`` and ``out`` modifiers
are overwritten with spaces and the file parsed again. The bytes keep their length, so every
span, line and signature (read from the original bytes) stays exact; the repaired tree is kept
only when it has fewer errors than the first.
"""

from __future__ import annotations

import re
from typing import Any

_VARIANCE = (b"in", b"out")
_WORD = re.compile(rb"[A-Za-z_$][\w$]*")
_GAP = re.compile(rb"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.S)  # whitespace and comments
_NOT_A_NAME = frozenset({b"extends"})  # `<out extends X>`: a parameter named `out`


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


def repaired(language: str, data: bytes, tree: Any, parser: Any, error_query: Any, lists: Any) -> Any:
    """``tree``, or the tree of ``data`` with the syntax its grammar lacks blanked out when that
    one has fewer errors."""
    if language not in ("typescript", "tsx") or not tree.root_node.has_error:
        return tree
    from tree_sitter import QueryCursor

    out = bytearray(data)
    for node in QueryCursor(lists).captures(tree.root_node).get("list", []):
        if node.has_error:
            blank_variance(data, node.start_byte, node.end_byte, out)
    if out == data:
        return tree
    again = parser.parse(bytes(out))
    if not again.root_node.has_error:
        return again
    before = len(QueryCursor(error_query).captures(tree.root_node).get("error", []))
    after = len(QueryCursor(error_query).captures(again.root_node).get("error", []))
    return again if after < before else tree
