"""What every language's rules share: reading tree-sitter nodes, and the record of what a
definition node defines (:class:`Defined`), which the walker turns into a symbol."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from kbc.domain.models import SymbolKind

SIGNATURE_CHARS = 200  # a longer declaration head is cut here


@dataclass(frozen=True, slots=True)
class Defined:
    """A definition as a language's rules read it from its node."""

    name: str
    kind: SymbolKind
    scope: tuple[str, ...]  # the names its qualified name sits under, past the module
    span: Any  # the node whose lines it spans (the attributes right above it join them)
    head_end: int  # the byte its head (the declaration up to its body) ends at
    public: bool
    is_async: bool = False
    bases: tuple[str, ...] = ()


class DefinitionRules(Protocol):
    """One language family's reading of definitions."""

    def define(self, node: Any, scope: tuple[str, ...]) -> Defined | None:
        """What ``node`` defines, ``scope`` being the names it sits under; None if nothing."""
        ...

    def scope_name(self, node: Any) -> str:
        """The name a scoping node (an ``impl``, a namespace) adds without being a symbol."""
        ...


def text(node: Any) -> str:
    return str(node.text.decode("utf-8", errors="replace")) if node is not None else ""


def first(node: Any, types: frozenset[str] | set[str]) -> Any:
    """The first descendant (breadth first) of one of ``types``."""
    queue = list(node.children)
    while queue:
        child = queue.pop(0)
        if child.type in types:
            return child
        queue.extend(child.children)
    return None


def every(node: Any, types: set[str]) -> list[Any]:
    """Every descendant of one of ``types``, breadth first."""
    found = []
    queue = list(node.children)
    while queue:
        child = queue.pop(0)
        if child.type in types:
            found.append(child)
        queue.extend(child.children)
    return found


def child(node: Any, types: frozenset[str] | set[str]) -> Any:
    """The first child of one of ``types`` (not a deeper descendant: a class's body is not
    searched for its own modifiers)."""
    return next((c for c in node.children if c.type in types), None)


def has_type(node: Any, kind: str) -> bool:
    return any(c.type == kind for c in node.children)


def has_child(node: Any, kind: str, written: str) -> bool:
    return any(c.type == kind and text(c) == written for c in node.children)


def end_line(node: Any) -> int:
    row, column = node.end_point
    return int(row) + (1 if column > 0 or row == node.start_point[0] else 0)


def head(data: bytes, start: int, end: int) -> str:
    """The bytes from ``start`` to ``end`` on one line, without a trailing ``{`` or ``=``."""
    written = data[start:end].decode("utf-8", errors="replace")
    return " ".join(written.split()).rstrip("{ =:")[:SIGNATURE_CHARS]


def unquote(written: str) -> str:
    return written.strip().strip("\"'`<>")


def type_name(node: Any) -> str:
    """The name of the type a receiver, impl or parameter names: ``*Server`` and
    ``Wrapper<T>`` are ``Server`` and ``Wrapper``."""
    if node is None:
        return ""
    if node.type in ("type_identifier", "identifier"):
        return text(node)
    found = first(node, {"type_identifier"})
    return text(found) if found is not None else text(node).split("<")[0].lstrip("*&")


def is_async(*owners: Any) -> bool:
    """An ``async`` keyword among the tokens of one of ``owners`` (or of its modifiers)."""
    for owner in owners:
        if owner is None:
            continue
        for c in owner.children:
            if (
                c.type == "async"
                or c.type.endswith("modifiers")
                and any(g.type == "async" for g in c.children)
            ):
                return True
    return False
