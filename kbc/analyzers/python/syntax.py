"""Small readers of libcst nodes: dotted names, string literals, annotations."""

from __future__ import annotations

import re

import libcst as cst

_WS = re.compile(r"\s+")
_DOTTED = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")


def dotted(node: cst.CSTNode) -> tuple[str, ...] | None:
    """``a.b.c`` as ("a", "b", "c"); None for anything that is not a dotted name."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        parts.reverse()
        return tuple(parts)
    return None


def string_value(node: cst.CSTNode | None) -> str | None:
    """The value of a plain string literal (no f-string), else None."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        try:
            value = node.evaluated_value
        except Exception:
            return None
        return value if isinstance(value, str) else None
    return None


def annotation_parts(node: cst.BaseExpression) -> tuple[str, ...] | None:
    """The class an annotation names: ``Foo``, ``"pkg.Foo"``, ``Optional[Foo]``, ``Foo | None``."""
    if isinstance(node, (cst.Name, cst.Attribute)):
        return dotted(node)
    text = string_value(node)
    if text is not None:
        text = text.strip()
        return tuple(text.split(".")) if _DOTTED.match(text) else None
    if isinstance(node, cst.Subscript):
        head = dotted(node.value)
        if head and head[-1] == "Optional" and len(node.slice) == 1:
            element = node.slice[0].slice
            if isinstance(element, cst.Index):
                return annotation_parts(element.value)
        return None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
        left, right = node.left, node.right
        if isinstance(right, cst.Name) and right.value == "None":
            return annotation_parts(left)
        if isinstance(left, cst.Name) and left.value == "None":
            return annotation_parts(right)
    return None


def literal_strings(node: cst.BaseExpression) -> tuple[str, ...] | None:
    """A list or tuple of string literals as a tuple; None otherwise."""
    if not isinstance(node, (cst.List, cst.Tuple)):
        return None
    values: list[str] = []
    for element in node.elements:
        if not isinstance(element, cst.Element):
            return None
        value = string_value(element.value)
        if value is None:
            return None
        values.append(value)
    return tuple(values)


def squash(text: str, limit: int = 160) -> str:
    """One line of at most ``limit`` characters."""
    text = _WS.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def doc_summary(doc: str | None, limit: int = 240) -> str:
    """The first prose paragraph of a cleaned docstring, on one line, markup off
    (:func:`kbc.analyzers.docstrings.summary`)."""
    from kbc.analyzers.docstrings import summary

    return summary(doc, limit)


def keyword_arg(call: cst.Call, name: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def positional_arg(call: cst.Call, index: int) -> cst.BaseExpression | None:
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[index].value if index < len(positional) else None


def name_like(value: str) -> bool:
    """A string that can name something (an environment variable): printable, without white
    space, at most 200 characters, valid UTF-8 (a lone surrogate, as in a table of Unicode
    ranges, is not)."""
    if not value or len(value) > 200 or not value.isprintable() or any(c.isspace() for c in value):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
