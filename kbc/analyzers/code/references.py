"""Imports and calls as a file writes them, in every language read through tree-sitter:
relative imports resolved to the module of the path they name, calls by the callee as written
(the repository-wide step resolves them, :mod:`kbc.analyzers.code.resolve`)."""

from __future__ import annotations

import posixpath
import re
from typing import Any

from kbc.analyzers.code.languages import code_module
from kbc.analyzers.code.syntax import child, first, text, unquote
from kbc.domain.models import Call, Import

_JAVA_NAMES = frozenset({"scoped_identifier", "identifier"})


def imports_of(node: Any, path: str) -> list[Import]:
    """What an import node (of any language) imports."""
    line = int(node.start_point[0]) + 1
    kind = node.type
    if kind in ("import_statement", "export_statement"):
        source = node.child_by_field_name("source")
        return [] if source is None else [_relative(line, unquote(text(source)), path)]
    if kind == "import_spec":  # Go
        alias = text(node.child_by_field_name("name"))
        return [_relative(line, unquote(text(node.child_by_field_name("path"))), path, alias=alias)]
    if kind == "import_declaration":  # Java
        target = child(node, _JAVA_NAMES) or first(node, _JAVA_NAMES)
        return [] if target is None else [Import(line, text(target))]
    if kind == "use_declaration":  # Rust
        argument = node.child_by_field_name("argument")
        written = text(argument).split("{")[0].rstrip(":").replace("::", ".")
        return [Import(line, _rust_module(written, path))]
    if kind == "mod_item" and node.child_by_field_name("body") is None:
        name = text(node.child_by_field_name("name"))
        here = posixpath.dirname(path)
        base = posixpath.basename(posixpath.splitext(path)[0])
        folder = here if base in ("lib", "main", "mod") else posixpath.join(here, base)
        return [Import(line, code_module(posixpath.join(folder, name + ".rs")))]
    if kind == "preproc_include":
        written = unquote(text(node.child_by_field_name("path")))
        if text(node.child_by_field_name("path")).startswith('"'):
            return [_relative(line, "./" + written, path)]
        return [Import(line, written)]
    return []


def _rust_module(written: str, path: str) -> str:
    """``crate.a.b`` is the module of the crate's ``src/a/b``; other paths stay as written."""
    if written.startswith("crate."):
        root = path.split("src/")[0] + "src" if "src/" in path else posixpath.dirname(path)
        return ".".join(part for part in (root.replace("/", "."), written.removeprefix("crate.")) if part)
    return written


def _relative(line: int, written: str, path: str, alias: str = "") -> Import:
    if not written.startswith("."):
        return Import(line, written, alias=alias)
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), written))
    if joined.startswith(".."):  # escapes the repository
        return Import(line, "", alias=alias)
    return Import(line, code_module(joined), alias=alias)


_LONGEST = 120  # a callee written longer is named by its last name
_PLAIN = re.compile(r"[^\s(<:]+")  # a callee as written that needs no more reading
# Java objects a method is called on that are made by an expression (`a.b().c()`, `new A().f()`):
# the callee is named by the method alone, the object's text (a whole chain) never read
_MADE = frozenset({"method_invocation", "object_creation_expression", "parenthesized_expression"})


def call_of(node: Any, caller: str) -> Call | None:
    """The call a call node makes, by the callee as written; None when it names none."""
    kind = node.type
    if kind == "method_invocation":  # Java: `object.name`, no `::` nor `<` in either
        target = node.child_by_field_name("object")
        name = text(node.child_by_field_name("name"))
        if target is None and name and len(name) <= _LONGEST and _PLAIN.fullmatch(name):
            return Call(caller, node.start_point[0] + 1, name)
        if target is not None and target.type in _MADE:
            return Call(caller, node.start_point[0] + 1, name) if name.isidentifier() else None
        written = f"{text(target)}.{name}" if target is not None else name
        if len(written) <= _LONGEST and _PLAIN.fullmatch(written):
            return Call(caller, node.start_point[0] + 1, written)
    elif kind in ("new_expression", "object_creation_expression"):
        written = text(node.child_by_field_name("constructor") or node.child_by_field_name("type"))
    else:
        written = text(node.child_by_field_name("function"))
    written = "".join(written.split())
    if not written or "(" in written or len(written) > _LONGEST:
        tail = written.rsplit(".", 1)[-1].rsplit("::", 1)[-1] if written else ""
        written = tail if tail.isidentifier() else ""
    if not written:
        return None
    return Call(caller, int(node.start_point[0]) + 1, written.replace("::", ".").split("<")[0])
