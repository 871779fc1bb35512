"""What every view builder reads: the facts store's content, indexed once."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from kbc.analyzers.project_docs import ProjectDocs
from kbc.analyzers.roles import ROLES, role_of
from kbc.domain.models import EntryPoint, FileFacts, GraphFacts, Inventory, ModuleGroup, Symbol
from kbc.graph.symbols import SymbolTable
from kbc.views.runnable import is_dev_script, runs_as_program

# Lists inside one view stay readable and fit a prompt.
MAX_LIST = 60


def location(path: str, start: int, end: int = 0) -> str:
    """``path:start-end`` (or ``path:line``), the form every view and citation uses."""
    return f"{path}:{start}-{end}" if end and end != start else f"{path}:{start}"


@dataclass(slots=True)
class Context:
    inventory: Inventory
    files: dict[str, FileFacts]  # by path
    graph: GraphFacts
    declared_entry_points: tuple[EntryPoint, ...]
    workflow_depth: int = 4
    max_workflows: int = 50
    max_api_workflows: int = 10
    docs: ProjectDocs = field(default_factory=ProjectDocs)  # what the README and docs say
    # Derived indexes (filled by ``build_context``):
    module_path: dict[str, str] = field(default_factory=dict)
    group_of: dict[str, str] = field(default_factory=dict)  # module -> group name
    groups: dict[str, ModuleGroup] = field(default_factory=dict)
    symbols: dict[str, tuple[Symbol, str]] = field(default_factory=dict)  # qname -> (symbol, path)
    symbol_rank: dict[str, float] = field(default_factory=dict)
    module_rank: dict[str, float] = field(default_factory=dict)
    # caller -> [(callee, line, path)] in call order
    callees: dict[str, list[tuple[str, int, str]]] = field(default_factory=dict)
    callers: dict[str, set[str]] = field(default_factory=dict)
    group_edges: Counter[tuple[str, str]] = field(default_factory=Counter)
    # the same, of the imports made when a module is imported (GraphFacts.deferred_imports left out)
    import_time_edges: Counter[tuple[str, str]] = field(default_factory=Counter)
    table: SymbolTable = field(default_factory=lambda: SymbolTable(()))  # names over the linked facts
    overriding: dict[str, list[str]] = field(default_factory=dict)  # method -> subclasses' overrides

    roles: dict[str, str] = field(default_factory=dict)  # path -> role, as discovery read it
    exported: list[tuple[str, str]] | None = None  # :func:`exported_names`, once read
    library: tuple[str, ...] | None = None  # :func:`library_modules`, once read
    memo: dict[str, object] = field(default_factory=dict)  # what the view builders read once

    def role(self, path: str) -> str:
        """A file's role (:mod:`kbc.analyzers.roles`): the fact discovery recorded, else what
        its path tells."""
        if not self.roles:
            self.roles = {f.path: f.role for f in self.inventory.files}
        return self.roles.get(path) or role_of(path, "python")

    def role_counts(self) -> list[tuple[str, int]]:
        """How many tracked files have each role, in the order of :data:`ROLES`."""
        counts = Counter(f.role for f in self.inventory.files)
        return [(role, counts[role]) for role in ROLES if counts[role]]

    def source_files(self) -> list[FileFacts]:
        """Files of code (Python, and the languages read through tree-sitter) that are the
        product's (not tests, examples, vendored code or generated modules)."""
        return [f for path, f in sorted(self.files.items()) if self.role(path) == "source"]

    def repository(self) -> str:
        """The repository's name: its main package (the same wherever it is checked out),
        else its folder's name."""
        packages = Counter(
            f.module.split(".")[0] for f in self.source_files() if f.module and f.language == "python"
        )
        if packages:
            return sorted(packages.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        return self.inventory.root.rstrip("/").rsplit("/", 1)[-1]

    def all_entry_points(self) -> list[EntryPoint]:
        """Every entry point; a sub-command runs the function its dispatch selects
        (:mod:`kbc.analyzers.python.dispatch`, :mod:`kbc.graph.dispatched`); where a tool
        dispatches its sub-commands, neither a sub-parser nor the parser of a module that
        dispatches is a way in of its own (their target is the function that builds the
        parser)."""
        known = self.memo.get("entry_points")
        if isinstance(known, list):
            return list(known)
        found = list(self.declared_entry_points)
        for facts in self.files.values():
            found.extend(facts.entry_points)
        dispatches = [e for e in found if e.detail.startswith("subcommand ")]
        where = {e.path for e in dispatches}
        kept = []
        for entry in found:
            if entry.kind == "argparse" and entry.detail in ("", "subcommand") and dispatches:
                if entry.detail == "subcommand" or entry.path in where:
                    continue  # builds a parser whose commands are dispatched
            kept.append(entry)
        unique = {(e.kind, e.name, e.target, e.path, e.line): e for e in kept}
        ordered = sorted(unique.values(), key=lambda e: (e.kind, e.name, e.path, e.line))
        self.memo["entry_points"] = ordered
        return list(ordered)

    def is_example(self, entry: EntryPoint) -> bool:
        """A demo or self-test block (``if __name__ == "__main__":`` in a module of a library
        (:func:`is_library`), not its ``__main__``, and an argument parser its module-level
        code builds there): an example of use, not a way in."""
        if entry.path.endswith("__main__.py") or entry.kind not in ("main_guard", "argparse"):
            return False
        facts = self.files.get(entry.path)
        if facts is None or not any(e.kind == "main_guard" for e in facts.entry_points):
            return False
        if entry.kind == "argparse" and entry.target != facts.module:
            return False
        return is_library(self)

    def entry_points(self) -> list[EntryPoint]:
        """The ways into the program: its examples and a tool's development scripts left out
        (:meth:`is_example`, :func:`kbc.views.runnable.is_dev_script`)."""
        return [e for e in self.all_entry_points() if not self.is_example(e) and not is_dev_script(self, e)]

    def examples(self) -> list[EntryPoint]:
        return [e for e in self.all_entry_points() if self.is_example(e) and not is_dev_script(self, e)]

    def group_of_symbol(self, qname: str) -> str:
        found = self.symbols.get(qname)
        if found is None:
            return ""
        return self.group_of.get(self.files[found[1]].module, "")

    def symbol_location(self, qname: str) -> str:
        found = self.symbols.get(qname)
        if found is None:
            return ""
        symbol, path = found
        return location(path, symbol.start_line, symbol.end_line)

    def group_files(self, group: str) -> list[FileFacts]:
        found = self.groups.get(group)
        if found is None:
            return []
        return [self.files[p] for p in found.files if p in self.files]


def build_context(
    inventory: Inventory,
    files: Iterable[FileFacts],
    graph: GraphFacts,
    declared_entry_points: Iterable[EntryPoint],
    *,
    workflow_depth: int = 4,
    max_workflows: int = 50,
    max_api_workflows: int = 10,
    docs: ProjectDocs | None = None,
) -> Context:
    by_path = {f.path: f for f in files}
    context = Context(
        inventory,
        by_path,
        graph,
        tuple(declared_entry_points),
        workflow_depth=workflow_depth,
        max_workflows=max_workflows,
        max_api_workflows=max_api_workflows,
        docs=docs if docs is not None else ProjectDocs(),
    )
    for path, facts in sorted(by_path.items()):
        context.module_path[facts.module] = path
        for symbol in facts.symbols:
            context.symbols[symbol.qname] = (symbol, path)
    for group in graph.groups:
        context.groups[group.name] = group
        for module in group.modules:
            context.group_of[module] = group.name
    context.symbol_rank = {m.id: m.pagerank for m in graph.symbols}
    context.module_rank = {m.id: m.pagerank for m in graph.modules}
    callees: dict[str, list[tuple[str, int, str]]] = defaultdict(list)
    callers: dict[str, set[str]] = defaultdict(set)
    for edge in graph.call_edges:
        callees[edge.source].append((edge.target, min(edge.lines) if edge.lines else 0, edge.path))
        callers[edge.target].add(edge.source)
    context.callees = {k: sorted(v, key=lambda c: (c[1], c[0])) for k, v in callees.items()}
    context.table = SymbolTable(by_path.values())
    context.overriding = context.table.overriding()
    context.callers = dict(callers)
    later = set(graph.deferred_imports)
    for edge in graph.import_edges:
        source, target = context.group_of.get(edge.source, ""), context.group_of.get(edge.target, "")
        if source and target and source != target:
            context.group_edges[(source, target)] += 1
            if (edge.source, edge.target) not in later:
                context.import_time_edges[(source, target)] += 1
    return context


def exported_names(context: Context) -> list[tuple[str, str]]:
    """(the public name, the qname it resolves to) of what each top-level package of the
    product exports (the first package with an ``__init__`` under a namespace package too):
    its ``__all__``, else the public names its ``__init__`` binds; a submodule its
    ``__all__`` names stands for what that submodule exports."""
    if context.exported is not None:
        return context.exported
    table = context.table
    found: dict[str, str] = {}
    for facts in context.source_files():
        parent = facts.module.rpartition(".")[0]
        if not facts.is_package or (parent and parent in context.module_path):
            continue
        names = facts.exports
        if names is None:
            bound = [i.alias for i in facts.imports if i.kind == "internal" and i.alias and i.name != "*"]
            defined = [s.name for s in facts.symbols if not s.parent]
            starred = [
                name
                for i in facts.imports
                if i.kind == "internal" and i.name == "*"
                for name in _star_names(context, i.target)
            ]
            names = tuple(dict.fromkeys(n for n in (*bound, *defined, *starred) if not n.startswith("_")))
        for name in names:
            # the package's own binding first: `from .distance import distance` makes the name
            # the function, not the submodule it shares its name with
            binding = table.bindings.get(facts.module, {}).get(name)
            qname = table.resolve(binding) if binding else table.resolve(f"{facts.module}.{name}")
            if qname is not None and qname in context.symbols:
                found.setdefault(f"{facts.module}.{name}", qname)
            elif facts.exports is not None and (module := f"{facts.module}.{name}") in context.module_path:
                # `__all__` naming a submodule (dateutil's parser, rrule, tz): what it exports
                for inner in _star_names(context, module):
                    target = table.resolve(f"{module}.{inner}")
                    if target is not None and target in context.symbols:
                        found.setdefault(f"{module}.{inner}", target)
    context.exported = sorted(found.items())
    return context.exported


def _star_names(context: Context, module: str) -> tuple[str, ...]:
    """What ``from module import *`` binds: its ``__all__``, else its public top-level names."""
    path = context.module_path.get(module)
    if path is None:
        return ()
    facts = context.files[path]
    if facts.exports is not None:
        return facts.exports
    return tuple(s.name for s in facts.symbols if not s.parent and not s.name.startswith("_"))


MIN_DOCUMENTED_MODULES = 3
COMMANDS = ("console_script", "gui_script")


def public_module(context: Context, module: str) -> bool:
    """A module of the product a user may import: inside a package, no dotted part private,
    not a ``__main__``, defining a public top-level class or function."""
    path = context.module_path.get(module)
    if path is None or "." not in module or context.role(path) != "source":
        return False
    if any(part.startswith("_") for part in module.split(".")):
        return False
    facts = context.files[path]
    return facts.language == "python" and any(
        s.public and not s.parent and s.kind in ("class", "function") for s in facts.symbols
    )


def library_modules(context: Context) -> tuple[str, ...]:
    """The public modules (:func:`public_module`) of a package its users import module by
    module, its ``__init__`` exporting nothing: one cut into its independent modules
    (:mod:`kbc.graph.independent`: a module group named by a plain module), or whose docs
    import a module (``from pkg import mod``), name one in full (``pkg.mod``) or have a page
    documenting one. A package that runs as a program (a declared command, or a main-guarded
    block that drives the package: :func:`kbc.views.runnable.runs_as_program`) is an
    application otherwise; any other package is a library also when its README or docs name
    a module by its last part, or at least ``MIN_DOCUMENTED_MODULES`` of its modules have a
    docstring. Empty for any other package."""
    if context.library is not None:
        return context.library
    found: tuple[str, ...] = ()
    if not exported_names(context):
        modules = tuple(sorted(m for m in context.module_path if public_module(context, m)))
        shelf = any(
            group.modules == (name,)
            and "." in name
            and name in context.module_path
            and not context.files[context.module_path[name]].is_package
            and context.role(context.module_path[name]) == "source"
            for name, group in context.groups.items()
        )
        docs = context.docs
        in_docs = any(m in docs.mentions or m in docs.titles or m in docs.imports for m in modules)
        if modules and (shelf or in_docs or not _runs(context) and _named_or_documented(context, modules)):
            found = modules
    context.library = found
    return found


def _runs(context: Context) -> bool:
    return any(e.kind in COMMANDS for e in context.declared_entry_points) or runs_as_program(context)


def _named_or_documented(context: Context, modules: tuple[str, ...]) -> bool:
    named = any(context.docs.mentions_module(m) for m in modules)
    documented = sum(bool(context.files[context.module_path[m]].doc) for m in modules)
    return named or documented >= MIN_DOCUMENTED_MODULES


def is_library(context: Context) -> bool:
    """A package with a public API: its top-level package exports names, or its users import
    its public modules (:func:`library_modules`)."""
    return bool(exported_names(context)) or bool(library_modules(context))
