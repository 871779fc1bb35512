"""Build the module import graph and the symbol call graph, with their metrics."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from kbc.domain.models import Edge, FileFacts, GraphFacts, NodeMetrics
from kbc.graph.grouping import group_modules
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
    ranks = nx.pagerank(graph) if graph.number_of_edges() else {
        n: 1.0 / graph.number_of_nodes() for n in graph}
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


def build_graph(files: Sequence[FileFacts], split_files: int, max_modules: int) -> GraphFacts:
    """The graph pass over linked facts (imports classified)."""
    table = SymbolTable(files)
    imports = import_edges(files)
    calls, unresolved = call_edges(files, table)
    module_graph = _digraph((f.module for f in files), imports)
    call_nodes = {s.qname for f in files for s in f.symbols} | {f.module for f in files}
    call_graph = _digraph(call_nodes, calls)
    external: Counter[str] = Counter()
    for facts in files:
        for dist in {i.distribution for i in facts.imports if i.kind == "external"}:
            external[dist] += 1
    groups = group_modules(((f.module, f.path) for f in files), split_files, max_modules)
    return GraphFacts(
        modules=_metrics(module_graph),
        import_edges=imports,
        import_cycles=_cycles(module_graph),
        symbols=_metrics(call_graph),
        call_edges=calls,
        call_cycles=_cycles(call_graph),
        groups=tuple(groups),
        unresolved_calls=unresolved,
        external=tuple(sorted(external.items(), key=lambda kv: (-kv[1], kv[0]))),
    )
