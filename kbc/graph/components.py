"""Components: the parts of a package whose files sit side by side, found in the file graph.

A folder says nothing about the parts of a flat package (rich's 78 modules, httpx's 17). A
module group the caller chooses (:func:`kbc.graph.build.with_components`) is cut into the
communities of its own graph: modules linked by the imports and resolved calls between
them, weighted by how many lines make them, and modules of one subpackage drawn together.
Louvain with a fixed seed over a graph built in sorted order, so the same facts give the
same components.

A community of fewer than ``MIN_COMPONENT_FILES`` files joins the one it is most linked to
(a module linked to none joins the component of its package's ``__init__``, else the
largest); a cut into fewer than two components, or past ``max_modules`` groups in all,
leaves the group whole. A component is named ``group[lead]``: the group and the module its
own graph ranks highest (never ``__init__``), a name no Python module can have.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from kbc.domain.models import ModuleGroup

MIN_GROUP_FILES = 12
MIN_COMPONENT_FILES = 3
SUBPACKAGE_WEIGHT = 2  # between two modules of one subpackage, as if linked by two lines
MAX_SUBPACKAGE_PAIRS = 40  # a larger subpackage is drawn together through its __init__ only
RESOLUTION = 1.0


def is_component(name: str) -> bool:
    return name.endswith("]") and "[" in name


def _package(module: str, path: str) -> str:
    return module if path.endswith("__init__.py") else module.rpartition(".")[0]


def _graph(group: ModuleGroup, links: Mapping[tuple[str, str], int], path_of: Mapping[str, str]) -> object:
    import networkx as nx

    members = set(group.modules)
    graph = nx.Graph()
    graph.add_nodes_from(sorted(members))

    def link(a: str, b: str, weight: int) -> None:
        if a != b:
            previous = graph.get_edge_data(a, b, {"weight": 0})["weight"]
            graph.add_edge(a, b, weight=previous + weight)

    for (source, target), lines in sorted(links.items()):
        if source in members and target in members:
            link(source, target, lines)
    by_package: dict[str, list[str]] = defaultdict(list)
    for module in group.modules:
        by_package[_package(module, path_of.get(module, ""))].append(module)
    for package, modules in sorted(by_package.items()):
        if package == group.name or len(modules) < 2:
            continue  # the group's own level is what is being cut
        if len(modules) <= MAX_SUBPACKAGE_PAIRS:
            for i, a in enumerate(modules):
                for b in modules[i + 1 :]:
                    link(a, b, SUBPACKAGE_WEIGHT)
        elif package in members:
            for module in modules:
                link(package, module, SUBPACKAGE_WEIGHT)
    return graph


def _merge_small(graph: object, parts: list[set[str]], home: str) -> list[set[str]]:
    """Fold communities under the minimum size into the one they are most linked to."""
    parts = sorted((set(p) for p in parts), key=lambda p: (-len(p), min(p)))
    while True:
        small = [p for p in parts if len(p) < MIN_COMPONENT_FILES]
        if not small or len(parts) == 1:
            return parts
        part = min(small, key=lambda p: (len(p), min(p)))
        weights: dict[int, int] = defaultdict(int)
        for node in sorted(part):
            for other, data in sorted(graph.adj[node].items()):  # type: ignore[attr-defined]
                for index, candidate in enumerate(parts):
                    if candidate is not part and other in candidate:
                        weights[index] += data["weight"]
        if weights:
            target = min(weights, key=lambda i: (-weights[i], min(parts[i])))
        else:
            target = next(
                (i for i, p in enumerate(parts) if home in p and p is not part),
                next(i for i, p in enumerate(parts) if p is not part),
            )
        parts[target] |= part
        parts = sorted((p for p in parts if p is not part), key=lambda p: (-len(p), min(p)))


def _lead(graph: object, part: set[str], group: str) -> str:
    import networkx as nx

    sub = graph.subgraph(sorted(part))  # type: ignore[attr-defined]
    ranks = nx.pagerank(sub, weight="weight") if sub.number_of_edges() else {n: 0.0 for n in sub}
    named = [m for m in part if m != group] or sorted(part)
    best = min(named, key=lambda m: (-round(ranks.get(m, 0.0), 9), m))
    return best[len(group) + 1 :] if best.startswith(group + ".") else best.rpartition(".")[2]


def split_components(
    group: ModuleGroup, links: Mapping[tuple[str, str], int], path_of: Mapping[str, str]
) -> list[ModuleGroup]:
    """The group cut into its components, or ``[group]`` when it has none worth a view.
    ``links``: lines linking two modules (either way); ``path_of``: each module's file."""
    import networkx as nx

    if len(group.files) < MIN_COMPONENT_FILES * 2 or is_component(group.name):
        return [group]
    graph = _graph(group, links, path_of)
    found = nx.community.louvain_communities(graph, weight="weight", resolution=RESOLUTION, seed=0)
    home = group.name if group.name in group.modules else min(group.modules)
    parts = _merge_small(graph, [set(c) for c in found], home)
    if len(parts) < 2:
        return [group]
    result = []
    taken: set[str] = set()
    for part in parts:
        lead = _lead(graph, part, group.name)
        name = f"{group.name}[{lead}]"
        if name in taken:  # two leads of one name from different packages: named in full
            name = f"{group.name}[{min(m for m in part if m.endswith('.' + lead) or m == lead)}]"
        taken.add(name)
        modules = tuple(sorted(part))
        result.append(ModuleGroup(name, modules, tuple(sorted(path_of[m] for m in modules if m in path_of))))
    return sorted(result, key=lambda g: g.name)
