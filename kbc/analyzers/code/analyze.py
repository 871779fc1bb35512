"""Facts of one file of TypeScript, JavaScript, Go, Java, Rust, C or C++, from its syntax tree.

Definitions (classes, structs, interfaces, traits, enums and type aliases as ``class``;
functions; methods) with their exact spans, parents and signatures as written, as each
language's rules read them (:mod:`kbc.analyzers.code.ecmascript` for TypeScript and
JavaScript, :mod:`kbc.analyzers.code.declarations` for the others); imports and calls as
written (:mod:`kbc.analyzers.code.references`); ``main`` functions as entry points. A file's
module is given by the build (one per file, :func:`kbc.analyzers.code.languages.code_modules`).
Tree-sitter recovers from syntax errors, so a broken file still gives the definitions it can
read, with a warning.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_right
from pathlib import Path
from typing import Any

from kbc.analyzers.code.declarations import Declarations
from kbc.analyzers.code.ecmascript import EcmaScript
from kbc.analyzers.code.grammars import nodes_of_interest, parse, parser_for
from kbc.analyzers.code.languages import RULES, Rules, code_module
from kbc.analyzers.code.references import call_of, imports_of
from kbc.analyzers.code.syntax import Defined, DefinitionRules, end_line, first, head, text
from kbc.analyzers.discover import git_blob_id, line_count
from kbc.analyzers.secrets import redact, scrub
from kbc.domain.models import (
    AnalysisFailed,
    AnalysisOk,
    AnalysisResult,
    AnalysisTask,
    Call,
    EntryPoint,
    FileFacts,
    Import,
    Symbol,
)

__all__ = ["analyze_code", "analyze_code_file", "definition_rules", "parser_for"]

_ECMASCRIPT = frozenset({"typescript", "tsx", "javascript"})
_DOC_CHARS = 300  # a definition's doc: its comment's first sentence, cut here


def analyze_code_file(task: AnalysisTask) -> AnalysisResult:
    """Analyze the file ``task`` names; never raises."""
    try:
        data = Path(task.abspath).read_bytes()
    except OSError as exc:
        return AnalysisFailed(task.path, "", f"cannot read: {exc.strerror or exc}")
    blob = git_blob_id(data)
    try:
        return AnalysisOk(analyze_code(data, task, blob))
    except MemoryError:
        return AnalysisFailed(task.path, blob, "too large to analyze within the memory a worker may use")
    except RecursionError:
        return AnalysisFailed(task.path, blob, "nested too deeply to analyze")
    except Exception as exc:
        return AnalysisFailed(task.path, blob, f"analyzer failed: {type(exc).__name__}: {exc}")


def definition_rules(data: bytes, language: str) -> DefinitionRules:
    if language in _ECMASCRIPT:
        return EcmaScript(data, language)
    return Declarations(data, language, RULES[language])


def analyze_code(data: bytes, task: AnalysisTask, blob: str = "") -> FileFacts:
    """The facts of one file's bytes (``task.language`` names its grammar); credentials the
    redaction takes out of the file are taken out of the facts too."""
    text_of_file = data.decode("utf-8", errors="replace")
    redaction = redact(
        task.abspath, text_of_file, task.language, also=task.also, scan=not task.clean, where=task.path
    )
    tree = parse(task.language, data)
    walker = _Walker(data, task.path, task.module or code_module(task.path), task.language)
    walker.run(tree.root_node)
    warnings = (
        ("syntax errors: the definitions around them may be incomplete",) if tree.root_node.has_error else ()
    )
    facts = FileFacts(
        task.path,
        walker.module,
        blob or git_blob_id(data),
        False,
        line_count(data),
        doc=walker.file_doc(),
        symbols=tuple(walker.symbols),
        imports=tuple(walker.imports),
        calls=tuple(walker.calls),
        entry_points=tuple(walker.entry_points),
        warnings=warnings,
        language=task.language,
    )
    if redaction.removed:
        facts = scrub(facts, tuple(redaction.removed))
    return dataclasses.replace(facts, secrets=redaction.findings)


class _Walker:
    def __init__(self, data: bytes, path: str, module: str, language: str) -> None:
        self.data = data
        self.path = path
        self.module = module
        self.rules: Rules = RULES[language]
        self.definitions = definition_rules(data, language)
        self.language = language
        self.lines = data.decode("utf-8", errors="replace").splitlines()
        self.symbols: list[Symbol] = []
        self.imports: list[Import] = []
        self.calls: list[Call] = []
        self.entry_points: list[EntryPoint] = []
        self.go_package = ""
        self.package_line = 0

    def run(self, root: Any) -> None:
        """Every node of interest (found by a tree-sitter query, in C): the nodes that define,
        scope or import in document order, the enclosing scopes kept on a stack of spans, so
        nothing else of the tree is visited; then the calls, each made by the innermost
        definition around it (found by its span among the definitions', in order)."""
        stack: list[tuple[int, int, tuple[str, ...], str, int]] = []  # start, end, scope, owner, its index
        spans: list[tuple[int, int, str]] = []  # each definition's start, end and qname, in order
        parents: list[int] = []  # the index in spans of the definition around each, or -1
        rules = self.rules
        imports, calls, scopes = rules.imports, rules.calls, rules.scopes
        define, module = self.definitions.define, self.module
        made: list[tuple[int, int, str, int, Call]] = []  # start, -end, kind, order, call
        structure, call_nodes = nodes_of_interest(self.language, root)
        for node in structure:
            start, end = node.start_byte, node.end_byte
            while stack and not (stack[-1][0] <= start and end <= stack[-1][1]):
                stack.pop()
            scope, owner, index = (stack[-1][2], stack[-1][3], stack[-1][4]) if stack else ((), "", -1)
            kind = node.type
            if kind == "package_clause":
                self.go_package = text(first(node, {"package_identifier"}))
                self.package_line = int(node.start_point[0]) + 1
            if kind in imports:
                self.imports.extend(imports_of(node, self.path))
            if kind in calls and (call := call_of(node, owner or module)) is not None:
                made.append((start, -end, kind, len(made), call))
            found = define(node, scope)
            if found is not None:
                defined = self._symbol(found)
                self.symbols.append(defined)
                self._entry(defined)
                spans.append((start, end, defined.qname))
                parents.append(index)
                stack.append((start, end, (*found.scope, found.name), defined.qname, len(spans) - 1))
            elif kind in scopes and (named := self.definitions.scope_name(node)):
                stack.append((start, end, (*scope, named), owner, index))
        starts = [span[0] for span in spans]
        for node in call_nodes:
            start, end = node.start_byte, node.end_byte
            at = bisect_right(starts, start) - 1
            while at >= 0 and spans[at][1] < end:
                at = parents[at]
            call = call_of(node, spans[at][2] if at >= 0 else module)
            if call is not None:
                made.append((start, -end, node.type, len(made), call))
        made.sort()
        self.calls.extend(found_call for *_, found_call in made)

    def _symbol(self, found: Defined) -> Symbol:
        span = found.span
        start = int(span.start_point[0]) + 1
        # (a node's previous sibling is found by a walk of its parent's children: only asked
        # where the language writes attributes or decorators on lines of their own)
        sibling = span.prev_named_sibling if self.rules.attributes else None
        while (
            sibling is not None and sibling.type in self.rules.attributes and end_line(sibling) >= start - 1
        ):
            start = int(sibling.start_point[0]) + 1
            sibling = sibling.prev_named_sibling
        scope = found.scope
        return Symbol(
            ".".join((self.module, *scope, found.name)),
            found.name,
            found.kind,
            start,
            end_line(span),
            head(self.data, span.start_byte, found.head_end),
            doc=self._doc(start),
            public=found.public,
            parent=".".join((self.module, *scope)) if scope else "",
            is_async=found.is_async,
            bases=found.bases,
        )

    def _doc(self, start: int) -> str:
        """The first sentence of the comment block right above line ``start``, its markers
        taken off, up to its first ``@tag``."""
        found: list[str] = []
        number = start - 1
        comments = self.rules.comments
        while 1 <= number <= len(self.lines):
            line = self.lines[number - 1].strip()
            if not line.startswith(comments) and not line.endswith("*/"):
                break
            found.append(line)
            number -= 1
        written = ""
        for line in reversed(found):
            line = line.removeprefix("/**").removeprefix("/*!").removeprefix("/*").replace("*/", " ")
            for mark in ("///", "//!", "//", "*"):
                line = line.removeprefix(mark)
            line = line.strip()
            if line.startswith("@"):
                break
            if line:
                written = f"{written} {line}" if written else line
                if ". " in written or len(written) > _DOC_CHARS + 2:
                    break  # its first sentence, or more than is kept, is read
        return (written[: written.index(". ") + 1] if ". " in written else written)[:_DOC_CHARS]

    def _entry(self, symbol: Symbol) -> None:
        """``main`` where the language starts a program from it."""
        if symbol.name != "main":
            return
        language = self.language
        program = (
            language == "go"
            and symbol.kind == "function"
            and self.go_package == "main"
            or language in ("rust", "c", "cpp")
            and symbol.kind == "function"
            or language == "java"
            and symbol.kind == "method"
            and "static" in symbol.signature.split()
        )
        if program:
            self.entry_points.append(
                EntryPoint("main", self.path, symbol.qname, self.path, symbol.start_line)
            )

    def file_doc(self) -> str:
        """The comment the file opens with (Go: the one above its package clause), unless it is
        a licence or copyright notice."""
        if self.package_line:
            doc = self._doc(self.package_line)
        else:  # a comment block the first code stands apart from (else it is that code's own)
            opening = next(
                (
                    n
                    for n, line in enumerate(self.lines, start=1)
                    if line.strip()
                    and not line.strip().startswith(self.rules.comments)
                    and not line.strip().endswith("*/")
                ),
                0,
            )
            above = opening - 1
            while above >= 1 and not self.lines[above - 1].strip():
                above -= 1
            doc = self._doc(above + 1) if 1 <= above < opening - 1 else ""
        lowered = doc.lower()
        return "" if "license" in lowered or "licence" in lowered or "copyright" in lowered else doc
