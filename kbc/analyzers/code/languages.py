"""What kbc reads of each language tree-sitter parses for it: the node types that define
something, that scope names without defining a symbol, that call and that import.

A language missing here keeps line windows; Python is read by :mod:`kbc.analyzers.python`.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

CODE_ANALYZER_VERSION = "2"


@dataclass(frozen=True, slots=True)
class Rules:
    grammar: str  # the tree-sitter-language-pack grammar
    classes: frozenset[str]  # types, classes, structs, interfaces, traits, enums
    functions: frozenset[str]  # functions; a method when inside a class or a scope of a type
    scopes: frozenset[str] = frozenset()  # name a scope without being a symbol (impl, namespace)
    calls: frozenset[str] = frozenset()
    imports: frozenset[str] = frozenset()
    comments: tuple[str, ...] = ("//", "/*", "*")  # how a comment line starts
    attributes: frozenset[str] = frozenset()  # sibling nodes above a definition that belong to it
    wrappers: frozenset[str] = frozenset()  # a parent whose span a definition takes (export, template)


_TS_CLASSES = frozenset(
    {
        "class_declaration",
        "abstract_class_declaration",
        "interface_declaration",
        "enum_declaration",
        "type_alias_declaration",
    }
)
_TS_FUNCTIONS = frozenset(
    {"function_declaration", "generator_function_declaration", "method_definition", "variable_declarator"}
)
_C_LIKE_CALLS = frozenset({"call_expression"})

RULES: dict[str, Rules] = {
    "typescript": Rules(
        "typescript",
        _TS_CLASSES,
        _TS_FUNCTIONS,
        calls=frozenset({"call_expression", "new_expression"}),
        imports=frozenset({"import_statement", "export_statement"}),
        wrappers=frozenset({"export_statement"}),
    ),
    "tsx": Rules(
        "tsx",
        _TS_CLASSES,
        _TS_FUNCTIONS,
        calls=frozenset({"call_expression", "new_expression"}),
        imports=frozenset({"import_statement", "export_statement"}),
        wrappers=frozenset({"export_statement"}),
    ),
    "javascript": Rules(
        "javascript",
        _TS_CLASSES,
        _TS_FUNCTIONS,
        calls=frozenset({"call_expression", "new_expression"}),
        imports=frozenset({"import_statement", "export_statement"}),
        wrappers=frozenset({"export_statement"}),
    ),
    "go": Rules(
        "go",
        frozenset({"type_spec"}),
        frozenset({"function_declaration", "method_declaration"}),
        calls=_C_LIKE_CALLS,
        imports=frozenset({"import_spec"}),
    ),
    "java": Rules(
        "java",
        frozenset(
            {
                "class_declaration",
                "interface_declaration",
                "enum_declaration",
                "record_declaration",
                "annotation_type_declaration",
            }
        ),
        frozenset({"method_declaration", "constructor_declaration"}),
        calls=frozenset({"method_invocation", "object_creation_expression"}),
        imports=frozenset({"import_declaration"}),
    ),
    "rust": Rules(
        "rust",
        frozenset({"struct_item", "enum_item", "trait_item", "union_item", "type_item"}),
        frozenset({"function_item"}),
        scopes=frozenset({"impl_item", "mod_item"}),
        calls=_C_LIKE_CALLS,
        imports=frozenset({"use_declaration", "mod_item"}),
        attributes=frozenset({"attribute_item"}),
    ),
    "c": Rules(
        "c",
        frozenset({"struct_specifier", "enum_specifier", "union_specifier", "type_definition"}),
        frozenset({"function_definition"}),
        calls=_C_LIKE_CALLS,
        imports=frozenset({"preproc_include"}),
        comments=("//", "/*", "*"),
    ),
    "cpp": Rules(
        "cpp",
        frozenset(
            {"struct_specifier", "enum_specifier", "union_specifier", "class_specifier", "type_definition"}
        ),
        frozenset({"function_definition"}),
        scopes=frozenset({"namespace_definition"}),
        calls=_C_LIKE_CALLS,
        imports=frozenset({"preproc_include"}),
        wrappers=frozenset({"template_declaration"}),
    ),
}

# The languages discovery names (kbc.analyzers.discover) that are read through tree-sitter.
CODE_LANGUAGES = frozenset(RULES)
ANALYZED_ROLES = frozenset({"source", "test", "example"})  # not vendored, generated or minified code


def code_module(path: str) -> str:
    """The module of a non-Python file: its path without the suffix, ``/`` read as ``.``."""
    stem, _ = posixpath.splitext(path)
    return stem.replace("/", ".")
