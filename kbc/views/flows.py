"""Facts of the behavioural views: features (what serves one capability) and workflows
(the calls an entry point makes, in order)."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

import networkx as nx

from kbc.domain.models import EntryPoint, Symbol
from kbc.views.context import MAX_LIST, Context, exported_names, is_library, library_modules, location
from kbc.views.library import usage
from kbc.views.structure import entry_point_data

MAX_STEPS = 40
MAX_EXPLORED = 2000  # steps a workflow's walk looks at before it keeps the shallowest
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
    """Depth-first, in call order: each step is a symbol with where it is defined and called.

    Past ``MAX_STEPS`` the shallowest steps are kept (every call the target makes, then theirs,
    ...), still in call order: a long first branch does not crowd out the calls after it."""
    order: list[tuple[str, int, str]] = []  # (qname, depth, called at), depth first
    visited: set[str] = set()
    stack = [(target, 0, "")]
    while stack and len(order) < MAX_EXPLORED:
        qname, depth, called_at = stack.pop()
        if qname in visited or qname not in context.symbols:
            continue
        visited.add(qname)
        order.append((qname, depth, called_at))
        if depth < context.workflow_depth:
            # what it calls, in call order, then the methods that override it in subclasses (a
            # call to the base's method runs one of them): all pushed in reverse, popped in order
            here = context.symbol_location(qname)
            stack.extend((sub, depth + 1, here) for sub in reversed(context.overriding.get(qname, ())))
            callees = reversed(context.callees.get(qname, ()))
            stack.extend((callee, depth + 1, location(path, line)) for callee, line, path in callees)
    truncated = len(order) > MAX_STEPS
    if len(order) > MAX_STEPS:
        kept = sorted(sorted(range(len(order)), key=lambda i: (order[i][1], i))[:MAX_STEPS])
        order = [order[i] for i in kept]
    steps: list[dict[str, Any]] = []
    for n, (qname, depth, called_at) in enumerate(order, start=1):
        step: dict[str, Any] = {
            "n": n,
            "depth": depth,
            "symbol": qname,
            "location": context.symbol_location(qname),
        }
        if called_at:
            step["called_at"] = called_at
        doc = context.symbols[qname][0].doc
        if doc:
            step["doc"] = doc
        steps.append(step)
    return steps, truncated


# Which entry point names a workflow when several run the same code: the declared command first.
_KIND_ORDER = (
    "console_script",
    "gui_script",
    "click",
    "typer",
    "flask_route",
    "fastapi_route",
    "django_route",
    "argparse",
    "subcommand",
    "main_guard",
)


def _kind_rank(kind: str) -> int:
    return _KIND_ORDER.index(kind) if kind in _KIND_ORDER else len(_KIND_ORDER)


def _serves_users(context: Context, entry: EntryPoint) -> bool:
    """Entry points of the product and its examples; not those defined inside tests, vendored
    or generated code."""
    return context.role(entry.path) not in ("test", "vendored", "generated")


def workflow_entries(context: Context) -> list[tuple[EntryPoint, list[EntryPoint]]]:
    """One entry point per code path that runs (with the others that run it too), most central
    first, capped; then the main flows of the public API (:func:`public_api_entries`). Entry
    points defined in tests are left out, and so is a library's ``__main__`` block (a package
    with a public API: its examples are never workflows, see :meth:`Context.is_example`)."""
    by_target: dict[str, list[EntryPoint]] = {}
    library = is_library(context)
    for entry in context.entry_points():
        if library and entry.kind == "main_guard":
            continue  # a library's `python -m` block: its flows are its public API's
        if entry.target in context.symbols and _serves_users(context, entry):
            by_target.setdefault(entry.target, []).append(entry)
    chosen = []
    for entries in by_target.values():
        ordered = sorted(entries, key=lambda e: (_kind_rank(e.kind), e.kind, e.name, e.path, e.line))
        chosen.append((ordered[0], ordered[1:]))
    chosen.sort(
        key=lambda pair: (
            -context.symbol_rank.get(pair[0].target, 0.0),
            pair[0].kind,
            pair[0].name,
            pair[0].path,
        )
    )
    chosen = chosen[: context.max_workflows]
    return chosen + [(entry, []) for entry in public_api_entries(context, {e.target for e, _ in chosen})]


# A flow of the public API whose code is mostly run by a flow already chosen adds nothing.
COVERED = 0.8
MIN_API_REACH = 5  # a name whose calls reach fewer symbols (itself included) is no workflow


def _public_module(context: Context, qname: str) -> bool:
    """Defined in a module of the product none of whose dotted parts is private."""
    found = context.symbols.get(qname)
    if found is None or context.role(found[1]) != "source":
        return False
    return not any(part.startswith("_") for part in context.files[found[1]].module.split("."))


def _beyond_exports(context: Context) -> list[tuple[str, str]]:
    """More of a library's public API than its top-level package exports (rich exports five
    functions; its users start at ``rich.console.Console``): the public definitions its
    examples call, then the documented public classes and functions of its public modules;
    never a copy or a definition only a demo block runs (:mod:`kbc.views.library`)."""
    called: dict[str, None] = {}
    for entry in context.examples():
        module = context.files[entry.path].module
        for callee, _line, _path in context.callees.get(module, ()):
            symbol = context.symbols[callee][0] if callee in context.symbols else None
            if symbol is not None and symbol.public and _public_module(context, callee):
                called[symbol.parent if symbol.kind == "method" and symbol.parent else callee] = None
    documented = sorted(
        q
        for q, (symbol, _path) in context.symbols.items()
        if not symbol.parent
        and symbol.public
        and symbol.doc
        and symbol.kind in ("class", "function")
        and _public_module(context, q)
    )
    use = usage(context)
    modules = set(library_modules(context))  # a library used module by module: only its modules
    return [
        (q, q)
        for q in (*called, *documented)
        if q in context.symbols
        and use.shown(q)
        and (not modules or context.files[context.symbols[q][1]].module in modules)
    ]


def public_api_entries(context: Context, taken: set[str]) -> list[EntryPoint]:
    """Where a library's users start: the exported functions, and the public methods of the
    exported classes, ranked by how much of the call graph they reach, then by PageRank; one
    whose reach a higher one mostly covers is left out; capped at ``views.max_api_workflows``.
    When the exports give fewer flows than that, or a package with no entry point exports
    nothing (``__init__`` holding only a version), or its users import its public modules
    (:func:`library_modules`), :func:`_beyond_exports` adds candidates, ranked after them."""
    exported = exported_names(context)
    chosen = _api_flows(context, taken, exported)
    if (exported or not taken or library_modules(context)) and len(chosen) < context.max_api_workflows:
        more = [pair for pair in _beyond_exports(context) if pair[1] not in {q for _, q in exported}]
        chosen = _api_flows(context, taken, exported, more)
    return chosen


def _api_flows(
    context: Context, taken: set[str], first: Sequence[tuple[str, str]], then: Sequence[tuple[str, str]] = ()
) -> list[EntryPoint]:
    named = [*first, *then]
    classes = {qname for _, qname in named if context.symbols[qname][0].kind == "class"}
    methods: dict[str, list[Symbol]] = {}
    for symbol, _path in context.symbols.values():
        if (
            symbol.parent in classes
            and symbol.kind != "class"
            and (not symbol.name.startswith("_") or symbol.name == "__call__")
        ):
            methods.setdefault(symbol.parent, []).append(symbol)
    candidates: dict[str, str] = {}  # qname -> the public name it is reached by
    later: set[str] = set()
    for index, (public, qname) in enumerate(named):
        found = (
            [(m.qname, f"{public}.{m.name}") for m in methods.get(qname, ())]
            if qname in classes
            else [(qname, public)]
        )
        for target, name in found:
            if target not in candidates:
                candidates[target] = name
                if index >= len(first):
                    later.add(target)
    reach = {q: set(_reach(context, [q], context.workflow_depth)) for q in candidates}
    kept = [q for q in candidates if len(reach[q]) >= MIN_API_REACH and q not in taken]
    turn = _module_turns(context, kept, reach) if not first else {}
    ranked = sorted(
        kept,
        key=lambda q: (q in later, turn.get(q, 0), -len(reach[q]), -context.symbol_rank.get(q, 0.0), q),
    )
    covered: set[str] = set()
    for target in taken:
        covered |= set(_reach(context, [target], context.workflow_depth))
    chosen: list[EntryPoint] = []
    for qname in ranked:
        if len(chosen) >= context.max_api_workflows:
            break
        if len(reach[qname] & covered) >= COVERED * len(reach[qname]):
            continue
        covered |= reach[qname]
        symbol, path = context.symbols[qname]
        detail = "public, not exported by the package" if qname in later else "exported by the package"
        chosen.append(EntryPoint("public_api", candidates[qname], qname, path, symbol.start_line, detail))
    return chosen


def _module_turns(context: Context, qnames: list[str], reach: dict[str, set[str]]) -> dict[str, int]:
    """A library that exports nothing is used module by module: each candidate's place among
    its own module's (0 for the one reaching most), so every module's first flow comes before
    any module's second."""
    by_module: dict[str, list[str]] = {}
    for qname in qnames:
        by_module.setdefault(context.files[context.symbols[qname][1]].module, []).append(qname)
    turns = {}
    for members in by_module.values():
        ordered = sorted(members, key=lambda q: (-len(reach[q]), -context.symbol_rank.get(q, 0.0), q))
        turns.update({q: n for n, q in enumerate(ordered)})
    return turns


def workflow_id(entry: EntryPoint) -> str:
    """Unique: one workflow per code path that runs (entry point names repeat across commands)."""
    return f"workflow:{entry.target}"


def workflow_facts(context: Context, entry: EntryPoint, also: list[EntryPoint]) -> dict[str, Any]:
    steps, truncated = workflow_steps(context, entry.target)
    return {
        "entry_point": entry_point_data(context, entry),
        "depth": context.workflow_depth,
        "also_via": [entry_point_data(context, e) for e in also],
        "steps": steps,
        "truncated": truncated,
    }


def _top_symbols(context: Context, qnames: list[str]) -> list[dict[str, Any]]:
    ranked = sorted(qnames, key=lambda q: (-context.symbol_rank.get(q, 0.0), q))[:FEATURE_SYMBOLS]
    return [{"qname": q, "location": context.symbol_location(q)} for q in sorted(ranked)]


def feature_groups(context: Context) -> dict[str, list[EntryPoint]]:
    """Entry points gathered by the module group of the code they run (the feature's name);
    a library's main flows of its public API (:func:`public_api_entries`) count as entry points."""
    features: dict[str, list[EntryPoint]] = {}
    entries = [e for e in context.entry_points() if _serves_users(context, e)]
    entries += public_api_entries(context, {e.target for e in entries})
    for entry in entries:
        group = context.group_of_symbol(entry.target) or context.group_of.get(
            context.files[entry.path].module if entry.path in context.files else "", ""
        )
        if group:
            features.setdefault(group, []).append(entry)
    return features


def communities(context: Context) -> list[list[str]]:
    """Without entry points: module groups of the product's code (not tests, docs or examples)
    that import each other most, as features."""
    product = {context.group_of[f.module] for f in context.source_files() if f.module in context.group_of}
    graph = nx.Graph()
    graph.add_nodes_from(sorted(product))
    for (source, target), n in sorted(context.group_edges.items()):
        if source not in product or target not in product:
            continue
        weight = graph.get_edge_data(source, target, {"weight": 0})["weight"]
        graph.add_edge(source, target, weight=weight + n)
    found = nx.community.louvain_communities(graph, weight="weight", seed=0)
    return sorted((sorted(c) for c in found), key=lambda c: c[0])


def feature_facts_for_entries(context: Context, name: str, entries: list[EntryPoint]) -> dict[str, Any]:
    reached = _reach(context, sorted({e.target for e in entries}), context.workflow_depth + 2)
    groups = sorted({g for q in reached if (g := context.group_of_symbol(q))})
    return {
        "name": name,
        "entry_points": [entry_point_data(context, e) for e in entries[:MAX_LIST]],
        "modules": groups,
        "symbols": _top_symbols(context, list(reached)),
    }


def feature_facts_for_community(context: Context, members: list[str]) -> dict[str, Any]:
    inside = set(members)
    qnames = [
        q for q in context.symbols if context.group_of_symbol(q) in inside and context.symbols[q][0].public
    ]
    return {
        "name": dominant(context, qnames) or community_lead(context, members),
        "entry_points": [],
        "modules": members,
        "symbols": _top_symbols(context, qnames),
    }


def community_lead(context: Context, members: list[str]) -> str:
    """The community's most central module group: what its feature view's id is named by."""
    return sorted(
        members, key=lambda g: (-sum(context.module_rank.get(m, 0.0) for m in context.groups[g].modules), g)
    )[0]


def dominant(context: Context, qnames: list[str], count: int = 3) -> str:
    """A library's feature by its dominant public symbols: the top-level classes and functions
    the call graph ranks highest ("Command, Option, Context")."""
    top = [q for q in qnames if not context.symbols[q][0].parent]
    ranked = sorted(top, key=lambda q: (-context.symbol_rank.get(q, 0.0), q))[:count]
    return ", ".join(context.symbols[q][0].name for q in ranked)
