"""Build the module import graph and the symbol call graph, with their metrics."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from kbc.analyzers.roles import role_of
from kbc.domain.models import Edge, FileFacts, GraphFacts, ModuleGroup, NodeMetrics
from kbc.graph.components import MIN_GROUP_FILES, split_components
from kbc.graph.grouping import OTHER, group_modules
from kbc.graph.independent import independent_parts
from kbc.graph.symbols import SymbolTable

MAX_EDGE_LINES = 20


def _digraph(nodes: Iterable[str], edges: Iterable[Edge]) -> Any:
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(sorted(nodes))
    graph.add_edges_from((e.source, e.target) for e in edges)
    return graph


def _metrics(graph: Any) -> tuple[NodeMetrics, ...]:
    import networkx as nx

    if graph.number_of_nodes() == 0:
        return ()
    ranks = (
        nx.pagerank(graph) if graph.number_of_edges() else {n: 1.0 / graph.number_of_nodes() for n in graph}
    )
    return tuple(
        NodeMetrics(node, ranks[node], graph.in_degree(node), graph.out_degree(node))
        for node in sorted(graph)
    )


def _cycles(graph: Any) -> tuple[tuple[str, ...], ...]:
    """Strongly connected components that hold a cycle (self-loops included), sorted."""
    import networkx as nx

    found = []
    for component in nx.strongly_connected_components(graph):
        if len(component) > 1:
            found.append(tuple(sorted(component)))
        else:
            (node,) = component
            if graph.has_edge(node, node):
                found.append((node,))
    return tuple(sorted(found, key=lambda c: (-len(c), c)))


def _edges(pairs: dict[tuple[str, str], set[int]], paths: dict[str, str]) -> tuple[Edge, ...]:
    return tuple(
        Edge(source, target, tuple(sorted(lines)[:MAX_EDGE_LINES]), paths.get(source, ""))
        for (source, target), lines in sorted(pairs.items())
    )


def deferred_imports(files: Sequence[FileFacts]) -> tuple[tuple[str, str], ...]:
    """The (source, target) module pairs whose imports are all deferred: made in a function,
    under ``if TYPE_CHECKING:`` or in a main guard, none when the source is imported."""
    at_import: set[tuple[str, str]] = set()
    later: set[tuple[str, str]] = set()
    for facts in files:
        for imp in facts.imports:
            if imp.kind == "internal" and imp.target and imp.target != facts.module:
                (later if imp.deferred else at_import).add((facts.module, imp.target))
    return tuple(sorted(later - at_import))


def import_edges(files: Sequence[FileFacts]) -> tuple[Edge, ...]:
    pairs: dict[tuple[str, str], set[int]] = defaultdict(set)
    for facts in files:
        for imp in facts.imports:
            if imp.kind == "internal" and imp.target and imp.target != facts.module:
                pairs[(facts.module, imp.target)].add(imp.line)
    return _edges(pairs, {f.module: f.path for f in files})


def call_edges(files: Sequence[FileFacts], table: SymbolTable) -> tuple[tuple[Edge, ...], int]:
    pairs: dict[tuple[str, str], set[int]] = defaultdict(set)
    unresolved = 0
    for facts in files:
        for call in facts.calls:
            callee = table.resolve_call(facts, call.target, call.text)
            if callee is None:
                unresolved += not call.target  # scope analysis could not name it
                continue
            pairs[(call.caller, callee)].add(call.line)
    owners = {s.qname: f.path for f in files for s in f.symbols}
    owners.update({f.module: f.path for f in files})
    return _edges(pairs, owners), unresolved


def module_links(
    files: Sequence[FileFacts], imports: Sequence[Edge], calls: Sequence[Edge]
) -> Counter[tuple[str, str]]:
    """Lines linking two modules, either way: the imports between them and the resolved calls
    from one's code into the other's."""
    module_of = {s.qname: f.module for f in files for s in f.symbols}
    module_of.update({f.module: f.module for f in files})
    links: Counter[tuple[str, str]] = Counter()
    for edge in (*imports, *calls):
        source, target = module_of.get(edge.source, ""), module_of.get(edge.target, "")
        if source and target and source != target:
            links[(min(source, target), max(source, target))] += max(1, len(edge.lines))
    return links


def with_components(
    groups: Sequence[ModuleGroup],
    files: Sequence[FileFacts],
    links: Counter[tuple[str, str]],
    split_files: int,
    max_modules: int,
    imports: Sequence[Edge] = (),
) -> list[ModuleGroup]:
    """Groups of the product's code cut into their components (:mod:`kbc.graph.components`),
    the largest first, while the groups stay within ``max_modules``: a group past
    ``split_files`` files (no subpackage was left to split it by), and a top-level package's
    own level of ``MIN_GROUP_FILES`` files or more (a flat library). A top-level package (or a
    group past the split size) whose modules barely link is cut into one part per public
    module or subpackage (:mod:`kbc.graph.independent`) instead. A subpackage's group under
    the split size stays whole: its folder is its authors' own cut; tests and examples are
    not cut."""
    path_of = {f.module: f.path for f in sorted(files, key=lambda f: f.path)}
    imported = {(e.source, e.target) for e in imports}
    result = list(groups)
    for group in sorted(groups, key=lambda g: (-len(g.files), g.name)):
        if group.name == OTHER:
            continue  # the small packages folded together: no one package to cut
        source = sum(role_of(path, "python") == "source" for path in group.files)
        if 2 * source <= len(group.files):
            continue
        top = "." not in group.name
        parts = (
            independent_parts(group, links, imported, path_of, group.name)
            if top or len(group.files) > split_files
            else None
        )
        if parts is None or len(result) - 1 + len(parts) > max_modules:
            flat = top and len(group.files) >= MIN_GROUP_FILES
            if not (flat or len(group.files) > split_files):
                continue
            parts = split_components(group, links, path_of)
        if len(parts) > 1 and len(result) - 1 + len(parts) <= max_modules:
            result = [g for g in result if g.name != group.name] + parts
    return sorted(result, key=lambda g: g.name)


def build_graph(files: Sequence[FileFacts], split_files: int, max_modules: int) -> GraphFacts:
    """The graph pass over linked facts (imports classified)."""
    table = SymbolTable(files)
    imports = import_edges(files)
    calls, unresolved = call_edges(files, table)
    module_graph = _digraph((f.module for f in files), imports)
    deferred = deferred_imports(files)
    later = set(deferred)
    at_import = _digraph((f.module for f in files), [e for e in imports if (e.source, e.target) not in later])
    call_nodes = {s.qname for f in files for s in f.symbols} | {f.module for f in files}
    call_graph = _digraph(call_nodes, calls)
    external: Counter[str] = Counter()
    for facts in files:
        for dist in {i.distribution for i in facts.imports if i.kind == "external"}:
            external[dist] += 1
    groups = with_components(
        group_modules(((f.module, f.path) for f in files), split_files, max_modules),
        files,
        module_links(files, imports, calls),
        split_files,
        max_modules,
        imports,
    )
    return GraphFacts(
        modules=_metrics(module_graph),
        import_edges=imports,
        import_cycles=_cycles(at_import),
        symbols=_metrics(call_graph),
        call_edges=calls,
        call_cycles=_cycles(call_graph),
        groups=tuple(groups),
        unresolved_calls=unresolved,
        external=tuple(sorted(external.items(), key=lambda kv: (-kv[1], kv[0]))),
        deferred_imports=deferred,
    )
