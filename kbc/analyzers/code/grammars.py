"""The grammars (tree-sitter-language-pack's, in its wheel), a file's tree, and the nodes of
it the walker reads, found by one tree-sitter query per language (in C)."""

from __future__ import annotations

from typing import Any

from kbc.analyzers.code.languages import RULES
from kbc.analyzers.code.mend import MENDERS
from kbc.analyzers.code.repair import mended, repaired

_PARSERS: dict[str, Any] = {}
_QUERIES: dict[str, Any] = {}
_REPAIR_QUERIES: dict[str, tuple[Any, Any]] = {}


def grammar(language: str) -> Any:
    from tree_sitter_language_pack import get_language

    return get_language(RULES[language].grammar)  # type: ignore[arg-type]


def parser_for(language: str) -> Any:
    if language not in _PARSERS:
        from tree_sitter_language_pack import get_parser

        _PARSERS[language] = get_parser(RULES[language].grammar)  # type: ignore[arg-type]
    return _PARSERS[language]


def parse(language: str, data: bytes) -> Any:
    """The tree of ``data``; where the grammar lacks a syntax the language has, the tree of the
    bytes with it blanked out (:mod:`kbc.analyzers.code.repair` for TypeScript,
    :mod:`kbc.analyzers.code.mend` for C, C++ and Rust), the spans unchanged."""
    parser = parser_for(language)
    tree = parser.parse(data)
    if not tree.root_node.has_error or language not in ("typescript", "tsx", *MENDERS):
        return tree
    if language not in _REPAIR_QUERIES:
        from tree_sitter import Query

        language_object = grammar(language)
        _REPAIR_QUERIES[language] = (
            # C, C++ and Rust's menders count a missing token too (`MOCK_METHOD(void, f, ());`)
            Query(language_object, "(ERROR) @error" + (" (MISSING) @error" if language in MENDERS else "")),
            Query(language_object, "(type_parameters) @list") if language in ("typescript", "tsx") else None,
        )
    errors, lists = _REPAIR_QUERIES[language]
    if language in MENDERS:
        return mended(data, tree, parser, errors, MENDERS[language])
    return repaired(language, data, tree, parser, errors, lists)


def only_calls(language: str) -> frozenset[str]:
    """The node kinds of ``language`` that call and do nothing else (define, scope, import)."""
    rules = RULES[language]
    return rules.calls - rules.classes - rules.functions - rules.scopes - rules.imports


def nodes_of_interest(language: str, root: Any) -> tuple[list[Any], list[Any]]:
    """The nodes that define, scope or import (and Go's package clause) under ``root``,
    parents before their children; and apart, in no order, the nodes that only call."""
    if language not in _QUERIES:
        from tree_sitter import Query

        rules = RULES[language]
        language_object = grammar(language)
        calls = only_calls(language)
        kinds = sorted(
            k
            for k in (
                *rules.classes,
                *rules.functions,
                *rules.scopes,
                *rules.calls,
                *rules.imports,
                "package_clause",
            )
            if language_object.id_for_node_kind(k, True) is not None
        )
        _QUERIES[language] = Query(
            language_object, " ".join(f"({kind}) @{'c' if kind in calls else 'n'}" for kind in kinds)
        )
    from tree_sitter import QueryCursor

    found = QueryCursor(_QUERIES[language]).captures(root)
    structure = sorted(found.get("n", []), key=lambda n: (n.start_byte, -n.end_byte, n.type))
    return structure, found.get("c", [])
