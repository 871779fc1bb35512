"""Look up definitions in the store: where they are, who calls them, what they call."""

from __future__ import annotations

from dataclasses import dataclass

from kbc.domain.models import Symbol
from kbc.store.facts_store import FactsStore


@dataclass(frozen=True, slots=True)
class Link:
    qname: str
    location: str  # "path:start-end" of the definition, or the module's path
    call_path: str  # the file holding the call sites
    lines: tuple[int, ...]  # call sites, in ``call_path``


@dataclass(frozen=True, slots=True)
class SymbolReport:
    symbol: Symbol
    path: str
    callers: tuple[Link, ...]
    callees: tuple[Link, ...]

    @property
    def location(self) -> str:
        return f"{self.path}:{self.symbol.start_line}-{self.symbol.end_line}"


def _matches(name: str, symbols: list[tuple[Symbol, str]]) -> list[tuple[Symbol, str]]:
    exact = [s for s in symbols if s[0].qname == name]
    if exact:
        return exact
    suffix = "." + name
    by_suffix = [s for s in symbols if s[0].qname.endswith(suffix)]
    if by_suffix:
        return by_suffix
    lowered = name.lower()
    return [s for s in symbols if s[0].name.lower() == lowered]


def find_symbols(store: FactsStore, name: str) -> list[SymbolReport]:
    """Definitions named ``name``: a qualified name, a dotted suffix or a bare name."""
    symbols: list[tuple[Symbol, str]] = []
    where: dict[str, str] = {}
    for facts in store.facts():
        where.setdefault(facts.module, facts.path)
        for symbol in facts.symbols:
            symbols.append((symbol, facts.path))
            where.setdefault(symbol.qname, f"{facts.path}:{symbol.start_line}-{symbol.end_line}")
    found = _matches(name.strip(), symbols)
    if not found:
        return []
    wanted = {s.qname for s, _ in found}
    callers: dict[str, list[Link]] = {q: [] for q in wanted}
    callees: dict[str, list[Link]] = {q: [] for q in wanted}
    for edge in store.graph().call_edges:
        if edge.target in wanted:
            callers[edge.target].append(Link(edge.source, where.get(edge.source, ""), edge.path, edge.lines))
        if edge.source in wanted:
            callees[edge.source].append(Link(edge.target, where.get(edge.target, ""), edge.path, edge.lines))
    return [
        SymbolReport(symbol, path, tuple(callers[symbol.qname]), tuple(callees[symbol.qname]))
        for symbol, path in sorted(found, key=lambda s: (s[0].qname, s[1], s[0].start_line))
    ]
