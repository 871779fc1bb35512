"""The definitions around a definition: what it calls, what calls it, and its overrides.

A task rarely names every definition a change touches: the function in the
traceback calls the helper where the bug is; the method named is overridden
by the subclass the user runs. So the definitions a query matched, and the
best-ranked ones, lend rank to their neighbours in the call graph and the
class hierarchy, in a list of their own for the fusion.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence

from kbc.domain.models import FileFacts, GraphFacts
from kbc.graph.symbols import SymbolTable

MAX_PER_SEED = 12  # neighbours taken of one definition (a hub's callers say little)


class SymbolNeighbours:
    def __init__(self, graph: GraphFacts, facts: Sequence[FileFacts], table: SymbolTable) -> None:
        callees: dict[str, list[tuple[int, str]]] = defaultdict(list)
        callers: dict[str, set[str]] = defaultdict(set)
        for edge in graph.call_edges:
            callees[edge.source].append((min(edge.lines, default=0), edge.target))
            callers[edge.target].add(edge.source)
        self.callees = {q: [t for _, t in sorted(found)] for q, found in callees.items()}
        self.callers = {q: sorted(found) for q, found in callers.items()}
        self.overrides = _overrides(facts, table)

    def around(self, seeds: Sequence[str]) -> list[str]:
        """Neighbours of ``seeds`` (qualified names, strongest first): each seed's callees in
        call order, its overrides, then its callers; each name once, seeds left out."""
        out: dict[str, None] = {}
        taken = set(seeds)
        for seed in seeds:
            kept = 0
            for name in itertools.chain(
                self.callees.get(seed, ()), self.overrides.get(seed, ()), self.callers.get(seed, ())
            ):
                if kept >= MAX_PER_SEED:
                    break
                if name not in taken and name not in out:
                    out[name] = None
                    kept += 1
        return list(out)


def _overrides(facts: Sequence[FileFacts], table: SymbolTable) -> dict[str, list[str]]:
    """Method -> the methods of the same name in its class's bases and subclasses."""
    linked: dict[str, set[str]] = defaultdict(set)
    for method, subs in table.overriding().items():
        for sub in subs:
            linked[method].add(sub)
            linked[sub].add(method)
    return {q: sorted(found) for q, found in linked.items()}
