"""What a library's users see of a module: its definitions that are public and used, not the
copies it keeps of another module's code, nor the functions only its demo block runs.

- A **copy** is a top-level definition of a module that another module of the product defines
  too: the module imports that name from the other (``try: from .dictutils import
  OrderedMultiDict`` with the class written out again below ``except ImportError:``), or,
  without an import, the two are of one kind and nearly one size, and only the other's
  module lists the name in its ``__all__`` (else the one called from outside its module by
  fewer callers; neither when as many call both).
- A **demo** definition runs only for a demo or self-test block (:meth:`Context.examples`):
  what such a block calls, and what only demo definitions call in turn (``excutils.main``,
  ``math_lol``, ``whoops_math``; an easter egg's function).
- A definition is **used** by the callers outside its own module (other modules, tests): the
  key symbols of a module's feature and its module view's table rank by them, then PageRank.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from kbc.views.context import Context

SAME_SIZE = 0.25  # two definitions whose line counts differ by less than this are of one size


@dataclass(slots=True)
class Usage:
    copies: set[str] = field(default_factory=set)
    demo: set[str] = field(default_factory=set)
    outside: dict[str, int] = field(default_factory=dict)  # qname -> callers outside its module

    def shown(self, qname: str) -> bool:
        return qname not in self.copies and qname not in self.demo

    def rank(self, context: Context, qname: str) -> tuple[int, float, str]:
        return (-self.outside.get(qname, 0), -context.symbol_rank.get(qname, 0.0), qname)


def _module_of(context: Context, qname: str) -> str:
    found = context.symbols.get(qname)
    return context.files[found[1]].module if found else qname


def _outside_callers(context: Context) -> dict[str, int]:
    counts: dict[str, int] = {}
    for target, callers in context.callers.items():
        home = _module_of(context, target)
        counts[target] = sum(_module_of(context, c) != home for c in callers)
    return counts


def _copies(context: Context, outside: dict[str, int]) -> set[str]:
    copies: set[str] = set()
    by_name: dict[str, list[str]] = defaultdict(list)
    for facts in context.source_files():
        top = {s.name: s.qname for s in facts.symbols if not s.parent}
        for name, qname in top.items():
            by_name[name].append(qname)
        for item in facts.imports:
            if item.kind == "internal" and item.name in top and item.alias in (item.name, ""):
                if f"{item.target}.{item.name}" in context.symbols and item.target != facts.module:
                    copies.add(top[item.name])
    for name, qnames in by_name.items():
        if len(qnames) < 2 or name.startswith("_"):
            continue
        for qname in qnames:
            symbol, path = context.symbols[qname]
            size = symbol.end_line - symbol.start_line + 1
            for other in qnames:
                if other == qname or other in copies:
                    continue
                twin, twin_path = context.symbols[other]
                twin_size = twin.end_line - twin.start_line + 1
                if twin.kind != symbol.kind or abs(size - twin_size) > SAME_SIZE * max(size, twin_size):
                    continue
                listed = name in (context.files[path].exports or ())
                twin_listed = name in (context.files[twin_path].exports or ())
                if (twin_listed and not listed) or (
                    twin_listed == listed and outside.get(other, 0) > outside.get(qname, 0)
                ):
                    copies.add(qname)
    return copies


def _demo(context: Context) -> set[str]:
    """Definitions only demo blocks run (see the module docstring)."""
    guard_line = {e.path: e.line for e in context.examples() if e.kind == "main_guard"}
    demo = {e.target for e in context.examples() if e.target in context.symbols}
    if not demo:
        return demo
    commands = {e.target for e in context.entry_points()}
    demo -= commands  # what a command runs is never only a demo's

    def demo_caller(caller: str, target: str) -> bool:
        if caller in demo:
            return True
        path = context.module_path.get(caller)
        if path is None or path not in guard_line:
            return False  # a function's call, or module-level code of a module with no demo
        lines = [line for callee, line, _ in context.callees.get(caller, ()) if callee == target]
        return bool(lines) and min(lines) >= guard_line[path]

    changed = True
    while changed:
        changed = False
        for target, callers in context.callers.items():
            if target in demo or target in commands or target not in context.symbols or not callers:
                continue
            if all(demo_caller(c, target) for c in callers):
                demo.add(target)
                changed = True
    return demo


def usage(context: Context) -> Usage:
    """The copies, demo definitions and callers from outside of the context's code, read once."""
    found = context.memo.get("usage")
    if isinstance(found, Usage):
        return found
    outside = _outside_callers(context)
    made = Usage(_copies(context, outside), _demo(context), outside)
    context.memo["usage"] = made
    return made


def key_symbols(context: Context, use: Usage, modules: set[str], count: int) -> list[str]:
    """The public top-level classes and functions of ``modules`` a user would name: no copies
    or demo definitions, the most used first."""
    found = [
        q
        for q, (symbol, path) in context.symbols.items()
        if not symbol.parent
        and symbol.public
        and symbol.kind in ("class", "function")
        and context.files[path].module in modules
        and use.shown(q)
    ]
    return sorted(found, key=lambda q: use.rank(context, q))[:count]
