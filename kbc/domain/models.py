"""Facts produced by the discover, analyze and graph passes.

Every model is a frozen, slotted dataclass: cheap to pickle across the process
pool, hashable, and serialised deterministically by :mod:`kbc.domain.codec`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# constant: a value a TypeScript or JavaScript module exports under a name (`export const email = /.../`)
SymbolKind = Literal["class", "function", "method", "constant"]
ImportKind = Literal["", "internal", "stdlib", "external", "unresolved"]


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A tracked text file that later passes may read."""

    path: str  # POSIX path relative to the repository root
    size: int
    blob: str  # git blob id of the content (sha1 of "blob <size>\\0" + bytes)
    language: str  # "python", "markdown", "toml", ... or "text"
    lines: int
    role: str = "source"  # what the file is, read from its path and content (kbc.analyzers.roles)


@dataclass(frozen=True, slots=True)
class SkippedPath:
    """A path that discover did not keep, with the reason in one word and a detail."""

    path: str
    # binary | oversized | symlink | symlink-outside | broken-symlink | excluded | missing |
    # unreadable | submodule
    reason: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Inventory:
    root: str  # absolute path of the repository
    vcs: str  # "git" or "none"
    commit: str  # HEAD commit, "" when not a git repository or no commit yet
    files: tuple[SourceFile, ...]
    skipped: tuple[SkippedPath, ...]
    ignored: int  # paths left out by ignore rules (ignored directories count once)


@dataclass(frozen=True, slots=True)
class Symbol:
    qname: str
    name: str
    kind: SymbolKind
    start_line: int  # first decorator or the def/class line
    end_line: int
    signature: str
    decorators: tuple[str, ...] = ()
    doc: str = ""  # docstring summary
    public: bool = True
    parent: str = ""  # enclosing symbol's qname, "" at module level
    is_async: bool = False
    bases: tuple[str, ...] = ()  # classes: base classes, resolved to qualified names where possible

    def head(self) -> str:
        """The definition's header to show: Python's name and signature (``(self, x) -> int``);
        another language's declaration as written (``func (c *Cmd) Run() error``)."""
        if self.signature and not self.signature.startswith("("):
            return self.signature
        return f"{'async ' if self.is_async else ''}{self.name}{self.signature}"


@dataclass(frozen=True, slots=True)
class Import:
    line: int
    module: str  # absolute module the statement names ("" when a relative import escapes the root)
    name: str = ""  # the imported name of a from-import, "*" for a star import
    alias: str = ""  # the local name bound, "" for star imports
    level: int = 0  # number of leading dots of a relative import
    # Filled by the link step, once every file of the repository is known:
    kind: ImportKind = ""
    target: str = ""  # in-repo module the import resolves to
    distribution: str = ""  # external: the distribution that provides it
    # "" when the module's import runs it; else when it runs: "function" (a def's body),
    # "type_checking" (under `if TYPE_CHECKING:`: never at run time), "main" (a main guard)
    deferred: str = ""


@dataclass(frozen=True, slots=True)
class Call:
    caller: str  # qname of the enclosing symbol, or the module for module-level code
    line: int
    text: str  # the callee as written, e.g. "self.save" or "os.path.join"
    target: str = ""  # qualified name the callee resolves to; "" when scope analysis cannot tell


@dataclass(frozen=True, slots=True)
class EntryPoint:
    # console_script | gui_script | main_guard | click | typer | argparse | flask_route |
    # fastapi_route | django_route; from other languages: main (a program's main function),
    # npm_bin (a package.json command: target the module of its file), npm_script (target the
    # command line a package.json script runs)
    kind: str
    name: str  # command name, route, script name or module
    target: str  # qualified name of the code that runs
    path: str
    line: int
    detail: str = ""  # e.g. HTTP methods, parent command group


@dataclass(frozen=True, slots=True)
class Integration:
    kind: str  # package | http | database | queue | storage | email | llm | env_var
    name: str  # distribution, client constructor or environment variable
    path: str
    line: int
    symbol: str = ""  # enclosing symbol's qname, or the module
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Guard:
    """A rule the code enforces, recorded where it is enforced (the business-rules view reads these)."""

    kind: str  # raise | assert | reject | limit
    condition: str  # the test as written (shortened past 200 characters)
    symbol: str  # enclosing symbol's qname, or the module
    line: int
    end_line: int
    outcome: str = ""  # what happens when it trips, as written: "raise ValueError(...)", "return None"
    message: str = ""  # the literal message of the raise or assert, if any
    limits: tuple[str, ...] = ()  # constants the condition compares against: UPPER_CASE names, numbers


@dataclass(frozen=True, slots=True)
class ClassField:
    """A declared field of a class: annotated class attribute, enum member or ``self.x`` set in __init__."""

    owner: str  # the class's qname
    name: str
    line: int
    annotation: str = ""
    default: str = ""  # the value as written (shortened past 80 characters)


@dataclass(frozen=True, slots=True)
class FileFacts:
    path: str
    module: str
    blob: str
    is_package: bool
    lines: int
    doc: str = ""
    exports: tuple[str, ...] | None = None  # the literal __all__, if any
    symbols: tuple[Symbol, ...] = ()
    imports: tuple[Import, ...] = ()
    calls: tuple[Call, ...] = ()
    entry_points: tuple[EntryPoint, ...] = ()
    integrations: tuple[Integration, ...] = ()
    guards: tuple[Guard, ...] = ()
    fields: tuple[ClassField, ...] = ()
    constants: tuple[tuple[str, str], ...] = ()  # module-level names bound once to a string literal
    warnings: tuple[str, ...] = ()
    secrets: tuple[tuple[int, str], ...] = ()  # (line, detector) of redacted credentials
    language: str = "python"  # the others are read through tree-sitter (kbc.analyzers.code)


@dataclass(frozen=True, slots=True)
class AnalysisOk:
    facts: FileFacts
    status: Literal["ok"] = "ok"

    @property
    def path(self) -> str:
        return self.facts.path


@dataclass(frozen=True, slots=True)
class AnalysisFailed:
    path: str
    blob: str
    error: str  # what went wrong, one line
    line: int = 0
    column: int = 0
    status: Literal["failed"] = "failed"


@dataclass(frozen=True, slots=True)
class AnalysisSkipped:
    path: str
    reason: str
    status: Literal["skipped"] = "skipped"


AnalysisResult = AnalysisOk | AnalysisFailed | AnalysisSkipped


@dataclass(frozen=True, slots=True)
class AnalysisTask:
    """What a worker needs to analyze one file, picklable."""

    path: str  # relative POSIX path
    abspath: str
    module: str
    is_package: bool
    also: tuple[str, ...] = ()  # credentials found in other files: redacted here too
    clean: bool = False  # the sweep's detectors found nothing in this file: not scanned again
    language: str = "python"  # which analyzer reads it (kbc.analyzers.dispatch)


@dataclass(frozen=True, slots=True)
class ModuleGroup:
    """A unit of the repository's structure (the subject of a module view)."""

    name: str  # dotted prefix, e.g. "django.db"
    modules: tuple[str, ...]
    files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NodeMetrics:
    id: str
    pagerank: float
    fan_in: int
    fan_out: int


@dataclass(frozen=True, slots=True)
class Edge:
    source: str
    target: str
    lines: tuple[int, ...]  # lines in the source's file where the edge is made
    path: str = ""  # the source's file


@dataclass(frozen=True, slots=True)
class GraphFacts:
    """The graph pass's output: import graph, call graph, metrics, cycles, groups."""

    modules: tuple[NodeMetrics, ...]
    import_edges: tuple[Edge, ...]
    import_cycles: tuple[tuple[str, ...], ...]
    symbols: tuple[NodeMetrics, ...]
    call_edges: tuple[Edge, ...]
    call_cycles: tuple[tuple[str, ...], ...]
    groups: tuple[ModuleGroup, ...]
    unresolved_calls: int = 0
    external: tuple[tuple[str, int], ...] = field(default=())  # distribution, number of importing modules
    # (source, target) of the import edges whose every import is deferred (Import.deferred):
    # not run when the source is imported; import_cycles are those of the other edges
    deferred_imports: tuple[tuple[str, str], ...] = field(default=())


ChunkKind = Literal["code", "doc", "view", "knowledge"]
# What is not a file of the repository: kbc's views and a knowledge root's documents.
OUTSIDE_KINDS = frozenset({"view", "knowledge"})
KNOWLEDGE_PREFIX = "@knowledge/"  # where knowledge documents sit in the index: never a repository path


@dataclass(frozen=True, slots=True)
class Chunk:
    """A unit of one file that retrieval ranks and packs: a definition of parsed code (or a
    part of a long one), module-level code, or a line window of any other text."""

    id: str  # stable: hash of path, the unit's identity (a definition's qname, or the window) and text
    path: str
    start_line: int
    end_line: int
    kind: ChunkKind
    language: str
    text: str  # with secrets redacted
    heading: str = ""  # breadcrumb: Markdown headings, or the enclosing definitions' signatures
    module: str = ""
    symbols: tuple[str, ...] = ()  # qualified names defined in the unit
    role: str = "source"  # the file's role (kbc.analyzers.roles.ROLES), or a view's / knowledge's kind
    tokens: int = 0  # cl100k_base tokens of ``text``, counted when indexed (0: not counted)
    unit: str = "window"  # prelude | module | class | function | method | window
    context: str = ""  # indexed with the text but never shown: a class outline's member signatures


@dataclass(frozen=True, slots=True)
class EmbedUnit:
    """A piece of a chunk small enough for the embedding model to see whole."""

    id: str  # hash of the model, chunk id and text
    chunk_id: str
    start_line: int
    end_line: int
    text: str


def models_shape() -> str:
    """A digest of every dataclass of this module and its fields' names: what a cached,
    pickled result was made of. A cache keyed by it never hands back an object of an older
    shape (a field added since would be missing from it)."""
    import dataclasses
    import hashlib
    import sys

    module = sys.modules[__name__]
    shapes = sorted(
        f"{name}({','.join(f.name for f in dataclasses.fields(kind))})"
        for name, kind in vars(module).items()
        if isinstance(kind, type) and dataclasses.is_dataclass(kind) and kind.__module__ == __name__
    )
    return hashlib.sha256(";".join(shapes).encode()).hexdigest()[:12]
