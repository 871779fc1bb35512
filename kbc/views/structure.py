"""Facts of the structural views: architecture, one module view per group, entry points."""

from __future__ import annotations

from collections import Counter
from typing import Any

import networkx as nx

from kbc.domain.models import EntryPoint, FileFacts
from kbc.graph.components import is_component
from kbc.views.context import MAX_LIST, Context, location
from kbc.views.library import Usage, usage


def entry_point_data(context: Context, entry: EntryPoint) -> dict[str, Any]:
    data: dict[str, Any] = {
        "kind": entry.kind,
        "name": entry.name,
        "target": entry.target,
        "location": location(entry.path, entry.line),
    }
    if entry.detail:
        data["detail"] = entry.detail
    runs_at = context.symbol_location(entry.target)
    if runs_at:
        data["runs"] = runs_at
    return data


def _layers(context: Context) -> list[list[str]]:
    """Groups by layer: layer 0 depends on no other group; each layer only on those below,
    counting the imports made when a module is imported (not those in functions, under
    ``if TYPE_CHECKING:`` or in a main guard). Groups in an import cycle share a layer.
    """
    graph = nx.DiGraph()
    graph.add_nodes_from(sorted(context.groups))
    graph.add_edges_from(sorted(context.import_time_edges))
    condensed = nx.condensation(graph)
    level: dict[int, int] = {}
    for node in reversed(list(nx.topological_sort(condensed))):
        below = [level[s] for s in condensed.successors(node)]
        level[node] = 1 + max(below) if below else 0
    layers: dict[int, list[str]] = {}
    for node, depth in level.items():
        layers.setdefault(depth, []).extend(condensed.nodes[node]["members"])
    return [sorted(layers[d]) for d in sorted(layers)]


MAX_CYCLES = 20
MAX_CLOSERS = 12


def closing_imports(context: Context, members: tuple[str, ...]) -> list[tuple[str, str]]:
    """A few imports whose removal leaves the modules of one import cycle acyclic: those from
    a module into a less central one (the core reaching back into its periphery), then each
    put back, least central target first, where it closes no cycle; sorted."""
    inside = set(members)
    later = set(context.graph.deferred_imports)
    edges = sorted(
        {
            (e.source, e.target)
            for e in context.graph.import_edges
            if e.source in inside
            and e.target in inside
            and e.source != e.target
            and (e.source, e.target) not in later
        }
    )
    rank = {m: (-context.module_rank.get(m, 0.0), m) for m in members}
    graph = nx.DiGraph()
    graph.add_nodes_from(sorted(inside))
    graph.add_edges_from(e for e in edges if rank[e[0]] > rank[e[1]])  # into a more central module
    closing = []
    outward = sorted((e for e in edges if rank[e[0]] < rank[e[1]]), key=lambda e: (rank[e[1]], e))
    for source, target in outward:
        if nx.has_path(graph, target, source):
            closing.append((source, target))
        else:
            graph.add_edge(source, target)
    return sorted(closing)


def cycle_facts(
    context: Context, cycle: tuple[str, ...], where: dict[tuple[str, str], str]
) -> dict[str, Any]:
    """One import cycle: its modules and the imports that close it, where each is made
    (``where``: each import edge's first line)."""
    closing = closing_imports(context, cycle) if len(cycle) > 1 else [(cycle[0], cycle[0])]
    return {
        "modules": list(cycle),
        "closing": len(closing),
        "closed_by": [
            {"source": s, "target": t, **({"location": where[(s, t)]} if (s, t) in where else {})}
            for s, t in closing[:MAX_CLOSERS]
        ],
    }


def _integration_counts(files: list[FileFacts]) -> list[dict[str, Any]]:
    counts: Counter[tuple[str, str]] = Counter()
    for facts in files:
        for item in facts.integrations:
            counts[(item.kind, item.name)] += 1
    ranked = sorted(counts.items(), key=lambda kv: (kv[0][0] != "package", kv[0][0], -kv[1], kv[0][1]))
    return [{"kind": kind, "name": name, "uses": n} for (kind, name), n in ranked[:MAX_LIST]]


def architecture_facts(context: Context) -> dict[str, Any]:
    source = context.source_files()
    group_rank: dict[str, float] = {}
    for module, rank in context.module_rank.items():
        group = context.group_of.get(module)
        if group:
            group_rank[group] = group_rank.get(group, 0.0) + rank
    packages = Counter(f.module.split(".")[0] for f in source if f.module)
    root = context.repository()
    where = {
        (e.source, e.target): location(e.path, e.lines[0])
        for e in context.graph.import_edges
        if e.lines and e.path
    }
    return {
        "repository": root,
        "files": len(context.inventory.files),
        "python_files": sum(f.language == "python" for f in context.files.values()),
        "languages": [
            {"language": language, "files": n}
            for language, n in sorted(
                Counter(f.language for f in context.files.values()).items(), key=lambda kv: (-kv[1], kv[0])
            )
        ],
        "roles": [{"role": role, "files": n} for role, n in context.role_counts()],
        "packages": [{"name": name, "files": n} for name, n in sorted(packages.items())],
        "layers": _layers(context),
        "modules": [
            {"name": name, "files": len(group.files), "centrality": round(group_rank.get(name, 0.0), 4)}
            for name, group in sorted(context.groups.items())
        ],
        "dependencies": [
            {"source": s, "target": t, "imports": n} for (s, t), n in sorted(context.group_edges.items())
        ],
        "import_cycles": [
            cycle_facts(context, cycle, where) for cycle in context.graph.import_cycles[:MAX_CYCLES]
        ],
        "entry_points": [entry_point_data(context, e) for e in context.entry_points()[:MAX_LIST]],
        "integrations": _integration_counts(source),
        "external": [{"distribution": d, "modules": n} for d, n in context.graph.external[:MAX_LIST]],
    }


def _public_symbols(context: Context, files: list[FileFacts], use: Usage) -> list[dict[str, Any]]:
    """The group's public definitions (a copy of another module's, or one only a demo block
    runs, left out), the most used first when they are too many for the table."""
    found = []
    for facts in files:
        top = {s.qname for s in facts.symbols if not s.parent and use.shown(s.qname)}
        for symbol in facts.symbols:
            if not symbol.public or (symbol.parent and symbol.parent not in top):
                continue
            if symbol.kind == "method" and symbol.name.startswith("_"):
                continue
            if not symbol.parent and symbol.qname not in top:
                continue
            found.append((symbol, facts.path))
    ranked = sorted(found, key=lambda sp: (bool(sp[0].parent), *use.rank(context, sp[0].qname)))
    chosen = sorted(ranked[:MAX_LIST], key=lambda sp: (sp[1], sp[0].start_line))
    return [
        {
            "qname": s.qname,
            "kind": s.kind,
            "signature": s.signature,
            "location": location(path, s.start_line, s.end_line),
            **({"doc": s.doc} if s.doc else {}),
        }
        for s, path in chosen
    ]


def module_facts(context: Context, name: str) -> dict[str, Any]:
    group = context.groups[name]
    files = context.group_files(name)
    outgoing = sorted(
        ((t, n) for (s, t), n in context.group_edges.items() if s == name), key=lambda tn: (-tn[1], tn[0])
    )
    incoming = sorted(
        ((s, n) for (s, t), n in context.group_edges.items() if t == name), key=lambda sn: (-sn[1], sn[0])
    )
    external = sorted(
        {i.distribution for f in files for i in f.imports if i.kind == "external" and i.distribution}
    )
    members = set(group.modules)
    metrics = [m for m in context.graph.modules if m.id in members]
    entry_points = [
        e
        for e in context.entry_points()
        if context.group_of_symbol(e.target) == name or e.path in group.files
    ]
    doc = group_doc(context, name, files)
    data: dict[str, Any] = {
        "name": name,
        "files": list(group.files),
        "modules": list(group.modules),
        "symbols": _public_symbols(context, files, usage(context)),
        "imports_out": [{"module": t, "imports": n} for t, n in outgoing],
        "imports_in": [{"module": s, "imports": n} for s, n in incoming],
        "external": external[:MAX_LIST],
        "centrality": {
            "pagerank": round(sum(m.pagerank for m in metrics), 4),
            "fan_in": sum(m.fan_in for m in metrics),
            "fan_out": sum(m.fan_out for m in metrics),
        },
        "entry_points": [entry_point_data(context, e) for e in entry_points[:MAX_LIST]],
    }
    if doc:
        data["doc"] = doc
    return data


def group_doc(context: Context, name: str, files: list[FileFacts]) -> str:
    """What a group is for, in its own words: a package's own docstring (the main package's
    README or docs index when it has none), never one of its modules'; a module's docstring;
    a component's, its lead module's; else the first docstring of its files."""
    path = context.module_path.get(name)
    if path is not None:
        facts = context.files[path]
        if facts.is_package and not facts.doc and name == context.repository():
            return context.docs.summary
        return facts.doc
    if is_component(name):
        package, _, lead = name[:-1].partition("[")
        for module in (f"{package}.{lead}", lead):
            found = context.module_path.get(module)
            if found is not None and context.files[found].doc:
                return context.files[found].doc
    docs = [f.doc for f in files if f.is_package and f.doc] + [f.doc for f in files if f.doc]
    return docs[0] if docs else ""


def entry_points_facts(context: Context) -> dict[str, Any]:
    data: dict[str, Any] = {"entry_points": [entry_point_data(context, e) for e in context.entry_points()]}
    examples = context.examples()
    if examples:
        data["examples"] = [entry_point_data(context, e) for e in examples[:MAX_LIST]]
    return data
