"""Facts of the behavioural views: features (what serves one capability) and workflows
(the calls an entry point makes, in order)."""

from __future__ import annotations

from collections import deque
from typing import Any

import networkx as nx

from kbc.analyzers.roles import role_of
from kbc.domain.models import EntryPoint
from kbc.views.context import MAX_LIST, Context, location
from kbc.views.structure import entry_point_data

MAX_STEPS = 40
FEATURE_SYMBOLS = 15


def _reach(context: Context, starts: list[str], depth: int) -> dict[str, int]:
    """Symbols reachable through resolved calls, with their depth (breadth first)."""
    seen = {s: 0 for s in starts if s in context.symbols}
    queue = deque(seen)
    while queue:
        current = queue.popleft()
        if seen[current] >= depth:
            continue
        for callee, _line, _path in context.callees.get(current, ()):
            if callee not in seen and callee in context.symbols:
                seen[callee] = seen[current] + 1
                queue.append(callee)
    return seen


def workflow_steps(context: Context, target: str) -> tuple[list[dict[str, Any]], bool]:
    """Depth-first, in call order: each step is a symbol with where it is defined and called."""
    steps: list[dict[str, Any]] = []
    visited: set[str] = set()
    truncated = False

    def visit(qname: str, depth: int, called_at: str) -> None:
        nonlocal truncated
        if qname in visited or qname not in context.symbols:
            return
        if len(steps) >= MAX_STEPS:
            truncated = True
            return
        visited.add(qname)
        step: dict[str, Any] = {"n": len(steps) + 1, "depth": depth, "symbol": qname,
                                "location": context.symbol_location(qname)}
        if called_at:
            step["called_at"] = called_at
        doc = context.symbols[qname][0].doc
        if doc:
            step["doc"] = doc
        steps.append(step)
        if depth >= context.workflow_depth:
            return
        for callee, line, path in context.callees.get(qname, ()):
            visit(callee, depth + 1, location(path, line))

    visit(target, 0, "")
    return steps, truncated


# Which entry point names a workflow when several run the same code: the declared command first.
_KIND_ORDER = ("console_script", "gui_script", "click", "typer", "flask_route", "fastapi_route",
               "django_route", "argparse", "main_guard")


def _kind_rank(kind: str) -> int:
    return _KIND_ORDER.index(kind) if kind in _KIND_ORDER else len(_KIND_ORDER)


def _serves_users(entry: EntryPoint) -> bool:
    """Entry points of the product and its examples; not those defined inside tests."""
    return role_of(entry.path, "python") not in ("test", "vendored")


def workflow_entries(context: Context) -> list[tuple[EntryPoint, list[EntryPoint]]]:
    """One entry point per code path that runs (with the others that run it too), most central
    first, capped. Entry points defined in tests are left out."""
    by_target: dict[str, list[EntryPoint]] = {}
    for entry in context.entry_points():
        if entry.target in context.symbols and _serves_users(entry):
            by_target.setdefault(entry.target, []).append(entry)
    chosen = []
    for entries in by_target.values():
        ordered = sorted(entries, key=lambda e: (_kind_rank(e.kind), e.kind, e.name, e.path, e.line))
        chosen.append((ordered[0], ordered[1:]))
    chosen.sort(key=lambda pair: (-context.symbol_rank.get(pair[0].target, 0.0), pair[0].kind,
                                  pair[0].name, pair[0].path))
    return chosen[: context.max_workflows]


def workflow_id(entry: EntryPoint) -> str:
    """Unique: one workflow per code path that runs (entry point names repeat across commands)."""
    return f"workflow:{entry.target}"


def workflow_facts(context: Context, entry: EntryPoint, also: list[EntryPoint]) -> dict[str, Any]:
    steps, truncated = workflow_steps(context, entry.target)
    return {"entry_point": entry_point_data(context, entry), "depth": context.workflow_depth,
            "also_via": [entry_point_data(context, e) for e in also],
            "steps": steps, "truncated": truncated}


def _top_symbols(context: Context, qnames: list[str]) -> list[dict[str, Any]]:
    ranked = sorted(qnames, key=lambda q: (-context.symbol_rank.get(q, 0.0), q))[:FEATURE_SYMBOLS]
    return [{"qname": q, "location": context.symbol_location(q)} for q in sorted(ranked)]


def feature_groups(context: Context) -> dict[str, list[EntryPoint]]:
    """Entry points gathered by the module group of the code they run (the feature's name)."""
    features: dict[str, list[EntryPoint]] = {}
    for entry in context.entry_points():
        if not _serves_users(entry):
            continue
        group = context.group_of_symbol(entry.target) or context.group_of.get(
            context.files[entry.path].module if entry.path in context.files else "", "")
        if group:
            features.setdefault(group, []).append(entry)
    return features


def communities(context: Context) -> list[list[str]]:
    """Without entry points: module groups that import each other most, as features."""
    graph = nx.Graph()
    graph.add_nodes_from(sorted(context.groups))
    for (source, target), n in sorted(context.group_edges.items()):
        weight = graph.get_edge_data(source, target, {"weight": 0})["weight"]
        graph.add_edge(source, target, weight=weight + n)
    found = nx.community.louvain_communities(graph, weight="weight", seed=0)
    return sorted((sorted(c) for c in found), key=lambda c: c[0])


def feature_facts_for_entries(context: Context, name: str, entries: list[EntryPoint]) -> dict[str, Any]:
    reached = _reach(context, sorted({e.target for e in entries}), context.workflow_depth + 2)
    groups = sorted({g for q in reached if (g := context.group_of_symbol(q))})
    return {"name": name, "entry_points": [entry_point_data(context, e) for e in entries[:MAX_LIST]],
            "modules": groups, "symbols": _top_symbols(context, list(reached))}


def feature_facts_for_community(context: Context, members: list[str]) -> dict[str, Any]:
    inside = set(members)
    qnames = [q for q in context.symbols if context.group_of_symbol(q) in inside
              and context.symbols[q][0].public]
    ranked = sorted(members, key=lambda g: (-sum(context.module_rank.get(m, 0.0)
                                                 for m in context.groups[g].modules), g))
    return {"name": ranked[0], "entry_points": [], "modules": members,
            "symbols": _top_symbols(context, qnames)}
