"""analyze one Python file: read, parse once, walk once, return a result value.

``analyze_file`` never raises: a file that cannot be read or parsed becomes an
``AnalysisFailed`` with the reason, so a process pool survives any one file.
"""

from __future__ import annotations

import ast
import dataclasses
import itertools
import re
from pathlib import Path

import libcst as cst

from kbc.analyzers.discover import git_blob_id, line_count
from kbc.analyzers.python.detect import Detector, ResolvedCall
from kbc.analyzers.python.dispatch import Found, read_dispatches, worth_reading
from kbc.analyzers.python.encoding import decode_source
from kbc.analyzers.python.records import DefRecord, WalkResult
from kbc.analyzers.python.rules import to_field, to_guard
from kbc.analyzers.python.scope import Resolver
from kbc.analyzers.python.syntax import doc_summary, dotted, name_like, squash
from kbc.analyzers.python.walker import walk
from kbc.analyzers.secrets import redact, scrub
from kbc.domain.models import (
    AnalysisFailed,
    AnalysisOk,
    AnalysisResult,
    AnalysisTask,
    Call,
    FileFacts,
    Symbol,
)

# Bump when the facts a file yields change shape or meaning: it keys the cache.
ANALYZER_VERSION = "16"


def _public(record: DefRecord, parent_public: bool, exports: tuple[str, ...] | None) -> bool:
    name = record.node.name.value
    if record.in_function or not parent_public:
        return False
    if exports is not None and record.outer.kind == "module":
        return name in exports
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _is_overload(symbol: Symbol) -> bool:
    return any(d.rsplit(".", 1)[-1] == "overload" for d in symbol.decorators)


def _without_overload_stubs(symbols: list[Symbol]) -> list[Symbol]:
    """The ``@overload`` signatures of a function are not its definition: where the file also
    holds the implementation, the symbol is the implementation (its span, its docstring), and
    what is nested in a stub goes with it."""
    implemented = {s.qname for s in symbols if s.kind != "class" and not _is_overload(s)}
    stubs = [s for s in symbols if _is_overload(s) and s.qname in implemented]
    if not stubs:
        return symbols
    spans = [(stub.start_line, stub.end_line) for stub in stubs]
    return [
        s for s in symbols if not any(start <= s.start_line and s.end_line <= end for start, end in spans)
    ]


class _Extractor:
    def __init__(self, module: cst.Module, result: WalkResult, task: AnalysisTask, text: str = "") -> None:
        self.module = module
        self.text = text
        self.walk = result
        self.task = task
        self.resolver = Resolver(result.classes)

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def symbols(self) -> list[Symbol]:
        public_by_qname: dict[str, bool] = {}
        out: list[Symbol] = []
        for record in self.walk.defs:
            node = record.node
            parent = record.outer.qname if record.outer.kind != "module" else ""
            public = _public(record, public_by_qname.get(parent, True), self.walk.exports)
            public_by_qname[record.qname] = public
            decorators = tuple(squash(self.code(d.decorator), 120) for d in node.decorators)
            bases: tuple[str, ...] = ()
            if isinstance(node, cst.ClassDef):
                args = [*node.bases, *node.keywords]
                signature = "(" + ", ".join(self._arg(a) for a in args) + ")" if args else ""
                bases = tuple(self._base(a.value, record) for a in node.bases)
                is_async = False
            else:
                signature = "(" + squash(self.code(node.params), 400) + ")"
                if node.returns is not None:
                    signature += " -> " + squash(self.code(node.returns.annotation), 120)
                is_async = node.asynchronous is not None
            out.append(
                Symbol(
                    qname=record.qname,
                    name=node.name.value,
                    kind=record.kind,  # type: ignore[arg-type]
                    start_line=record.start,
                    end_line=record.end,
                    signature=signature,
                    decorators=decorators,
                    doc=doc_summary(node.get_docstring()),
                    public=public,
                    parent=parent,
                    is_async=is_async,
                    bases=bases,
                )
            )
        return _without_overload_stubs(out)

    def _arg(self, arg: cst.Arg) -> str:
        keyword = f"{arg.keyword.value}=" if arg.keyword is not None else ""
        return arg.star + keyword + squash(self.code(arg.value), 80)

    def _base(self, expr: cst.BaseExpression, record: DefRecord) -> str:
        generic = expr.value if isinstance(expr, cst.Subscript) else expr  # Base[T] -> Base
        parts = dotted(generic)
        if parts:
            resolved = self.resolver.resolve(parts, record.outer)
            if resolved is not None:
                return resolved.qname
        return squash(self.code(expr), 80)

    def calls(self) -> list[ResolvedCall]:
        out: list[ResolvedCall] = []
        for record in self.walk.calls:
            if record.parts is not None:
                text = ".".join(record.parts)
                resolved = self.resolver.resolve(record.parts, record.scope)
                target = resolved.qname if resolved is not None else ""
            else:
                text, target = squash(self.code(record.node.func), 80), ""
            out.append(
                ResolvedCall(record.node, Call(record.scope.qname, record.line, text, target), record.scope)
            )
        return out

    def facts(self, blob: str, lines: int, warnings: tuple[str, ...]) -> FileFacts:
        task = self.task
        symbols = self.symbols()
        resolved = self.calls()
        calls = [r.call for r in resolved]
        detector = Detector(self.walk, self.resolver, task.path, task.module, self.code)
        detector.decorated(self.walk.defs)
        detector.calls(resolved)
        detector.env_subscripts()
        detector.main_guards(calls)
        if worth_reading(self.text, detector.imported_tops):
            found = [Found(r.node, r.call.target, r.call.line, r.scope) for r in resolved]
            dispatches = read_dispatches(self.module, self.walk, self.resolver, task.module, found, self.text)
            detector.dispatched(dispatches)
        return FileFacts(
            path=task.path,
            module=task.module,
            blob=blob,
            is_package=task.is_package,
            lines=lines,
            doc=doc_summary(self.module.get_docstring()),
            exports=self.walk.exports,
            symbols=tuple(symbols),
            imports=tuple(self.walk.imports),
            calls=tuple(sorted(calls, key=lambda c: (c.line, c.caller, c.text, c.target))),
            entry_points=tuple(
                sorted(detector.entry_points, key=lambda e: (e.line, e.kind, e.name, e.target))
            ),
            integrations=tuple(
                sorted(detector.integrations, key=lambda i: (i.line, i.kind, i.name, i.symbol))
            ),
            guards=tuple(to_guard(r, self.code) for r in self.walk.guards),
            fields=tuple(to_field(f, self.code) for f in self.walk.fields),
            constants=tuple(
                sorted(
                    (name, value) for name, value in self.walk.constants.items() if value and name_like(value)
                )
            ),
            warnings=warnings,
        )


def _syntax_failure(path: str, blob: str, text: str, exc: cst.ParserSyntaxError) -> AnalysisFailed:
    """Report where the file is broken. The interpreter's own compiler, asked only on
    this failure path, gives the exact position and its familiar message (such as
    the hint for a Python 2 ``print`` statement); libcst's message is the fallback."""
    try:
        ast.parse(text)
    except SyntaxError as syntax:
        return AnalysisFailed(
            path, blob, f"syntax error: {syntax.msg}", syntax.lineno or 0, syntax.offset or 0
        )
    except (ValueError, RecursionError, MemoryError):
        pass
    first = str(exc.message).strip().splitlines()[0] if exc.message else "invalid syntax"
    return AnalysisFailed(path, blob, f"syntax error: {first}", exc.raw_line, exc.raw_column + 1)


MAX_CHAIN = 1000  # operands of one chain of ``and``/``or`` that libcst nests one level each
_BRACKET_STEP = {ord("("): 1, ord("["): 1, ord("{"): 1, ord(")"): -1, ord("]"): -1, ord("}"): -1}
_BRACKETS = re.compile(r"[()\[\]{}]")
_BOOLEAN_WORDS = re.compile(r"\b(?:and|or)\b")


NESTING_MEMORY_CHARS = 2_000_000  # above this, a MemoryError means size, not nesting


def too_deep(text: str) -> bool:
    """Whether libcst's native parser could overflow its stack on ``text`` (it would kill the
    process, not raise). CPython's parser refuses safely what nests deeper than it can build
    (more than 200 brackets, chains of thousands of operators, thousands of ``elif``); it keeps
    ``and``/``or`` chains flat where libcst nests them, so those are measured here. A file
    CPython rejects for another syntax error is measured by its brackets alone."""
    try:
        tree = ast.parse(text)
    except RecursionError:
        return True
    except MemoryError:
        # CPython's parser reports a stack overflow as MemoryError: nesting, in a text of
        # ordinary size; in a huge one, memory itself ran out, and the caller says so.
        if len(text) > NESTING_MEMORY_CHARS:
            raise
        return True
    except SyntaxError as exc:
        return "too many nested" in str(exc.msg) or _bracket_depth(text) > 200
    except ValueError:  # a NUL byte: libcst reports it
        return False
    if len(_BOOLEAN_WORDS.findall(text)) < MAX_CHAIN:
        return False
    pending: list[tuple[ast.AST, int]] = [(tree, 0)]
    while pending:
        node, depth = pending.pop()
        if isinstance(node, ast.BoolOp):
            depth += len(node.values) - 1
            if depth > MAX_CHAIN:
                return True
        pending.extend((child, depth) for child in ast.iter_child_nodes(node))
    return False


def _bracket_depth(text: str) -> int:
    """The deepest bracket nesting, counting brackets inside strings and comments too."""
    steps = [_BRACKET_STEP[ord(m.group())] for m in _BRACKETS.finditer(text)]
    return max(itertools.accumulate(steps), default=0)


def analyze_source(data: bytes, task: AnalysisTask) -> AnalysisResult:
    """Facts of one file's bytes, read as written; then every credential the redaction takes
    out of the file is taken out of the facts too, so no signature, docstring or decorator
    carries one (a redacted file may not parse: facts come from the file, not from it)."""
    blob = git_blob_id(data)
    text, warnings = decode_source(data)
    redaction = redact(task.abspath, text, "python", also=task.also, scan=not task.clean, where=task.path)
    lines = line_count(data)
    if too_deep(text):
        return AnalysisFailed(task.path, blob, "nested too deeply for the parser")
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        return _syntax_failure(task.path, blob, redaction.text, exc)  # quoted from what may be shown
    except cst.CSTValidationError as exc:  # parses, but Python rejects it (e.g. bare except not last)
        return AnalysisFailed(task.path, blob, f"syntax error: {exc}")
    except RecursionError:
        return AnalysisFailed(task.path, blob, "nested too deeply for the parser")
    except Exception as exc:
        return AnalysisFailed(task.path, blob, f"parser failed: {type(exc).__name__}: {exc}")
    try:
        result = walk(module, task.module, task.is_package)
        facts = _Extractor(module, result, task, text).facts(blob, lines, warnings)
        if redaction.removed:
            facts = scrub(facts, tuple(redaction.removed))
        facts = dataclasses.replace(facts, secrets=redaction.findings)
    except RecursionError:
        return AnalysisFailed(task.path, blob, "nested too deeply to analyze")
    except Exception as exc:
        return AnalysisFailed(task.path, blob, f"analyzer failed: {type(exc).__name__}: {exc}")
    return AnalysisOk(facts)


def analyze_file(task: AnalysisTask) -> AnalysisResult:
    """Analyze the file ``task`` names; never raises."""
    try:
        data = Path(task.abspath).read_bytes()
    except OSError as exc:
        return AnalysisFailed(task.path, "", f"cannot read: {exc.strerror or exc}")
    try:
        return analyze_source(data, task)
    except MemoryError:
        return AnalysisFailed(
            task.path, git_blob_id(data), "too large to analyze within the memory a worker may use"
        )
