"""What kbc reads of each language tree-sitter parses for it: the node types that define
something, that scope names without defining a symbol, that call and that import.

A language missing here keeps line windows; Python is read by :mod:`kbc.analyzers.python`.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from kbc.analyzers.code import ecmascript

# 2: credentials judged where they stand; 3: definitions bound to values, exported constants,
# members under their owners; 4: C++ methods under every type and namespace that qualifies them,
# Rust trait methods without a body, Java compact constructors and enum constants with bodies
CODE_ANALYZER_VERSION = "5"


@dataclass(frozen=True, slots=True)
class Rules:
    grammar: str  # the tree-sitter-language-pack grammar
    classes: frozenset[str]  # types, classes, structs, interfaces, traits, enums
    functions: frozenset[str]  # functions (a method when inside a type); other nodes that may define
    scopes: frozenset[str] = frozenset()  # name a scope without being a symbol (impl, namespace)
    calls: frozenset[str] = frozenset()
    imports: frozenset[str] = frozenset()
    comments: tuple[str, ...] = ("//", "/*", "*")  # how a comment line starts
    attributes: frozenset[str] = frozenset()  # sibling nodes above a definition that belong to it
    wrappers: frozenset[str] = frozenset()  # a parent whose span a definition takes (export, template)


_C_LIKE_CALLS = frozenset({"call_expression"})


def _ecmascript(grammar: str) -> Rules:
    return Rules(
        grammar,
        ecmascript.DECLARED,
        ecmascript.FUNCTIONS | ecmascript.BINDERS,
        calls=frozenset({"call_expression", "new_expression"}),
        imports=frozenset({"import_statement", "export_statement"}),
        attributes=frozenset({"decorator"}),
    )


RULES: dict[str, Rules] = {
    "typescript": _ecmascript("typescript"),
    "tsx": _ecmascript("tsx"),
    "javascript": _ecmascript("javascript"),
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
                "enum_constant",
            }
        ),
        frozenset({"method_declaration", "constructor_declaration", "compact_constructor_declaration"}),
        calls=frozenset({"method_invocation", "object_creation_expression"}),
        imports=frozenset({"import_declaration"}),
    ),
    "rust": Rules(
        "rust",
        frozenset({"struct_item", "enum_item", "trait_item", "union_item", "type_item"}),
        frozenset({"function_item", "function_signature_item"}),
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


# TypeScript and what is compiled from it may sit side by side (`x.ts`, `x.js`, `x.cjs`,
# `x.d.ts`): one stem, several files. The first of these suffixes present keeps the stem's
# module; each other file's module is its whole name (`x.cjs`, `x.d.ts`), so facts, calls and
# their locations stay with the file that holds them.
_ONE_STEM = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs", ".d.ts", ".d.mts", ".d.cts")
_DECLARATIONS = (".d.ts", ".d.mts", ".d.cts")


def _stem(path: str) -> tuple[str, str]:
    for suffix in _DECLARATIONS:
        if path.endswith(suffix) and len(path) > len(suffix):
            return path[: -len(suffix)], suffix
    return posixpath.splitext(path)


def code_suffix(path: str) -> str:
    """What tells apart the files of one stem: ``.cjs`` of ``x.cjs``, ``.d.ts`` of ``x.d.ts``."""
    return _stem(path)[1]


def code_module(path: str) -> str:
    """The module of a non-Python file alone: its path without the suffix (``.d.ts`` whole),
    ``/`` read as ``.``. An import's relative path names a module the same way."""
    return _stem(path)[0].replace("/", ".")


def code_modules(paths: Iterable[str]) -> dict[str, str]:
    """Path -> module of each non-Python file of a repository, one module per file: of the
    TypeScript and JavaScript files of one stem, the first by ``_ONE_STEM``'s order keeps the
    stem, and the others are named by their whole file name."""
    by_stem: dict[str, list[tuple[int, str]]] = defaultdict(list)
    modules = {}
    for path in paths:
        modules[path] = code_module(path)
        suffix = _stem(path)[1]
        if suffix in _ONE_STEM:
            by_stem[modules[path]].append((_ONE_STEM.index(suffix), path))
    for files in by_stem.values():
        for _, path in sorted(files)[1:]:
            modules[path] = path.replace("/", ".")
    return modules
