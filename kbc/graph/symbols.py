"""Repository-wide name resolution: from a file's call target to a definition.

Per-file analysis names a call target as the file sees it (``pkg.foo`` after
``from pkg import foo``). Here that name is followed through re-exports
(``pkg/__init__.py`` importing ``foo`` from ``pkg.core``), star imports and
base classes (``self.save`` defined on a parent class) to the symbol that
defines it.
"""

from __future__ import annotations

from collections.abc import Iterable

from kbc.analyzers.link import ModuleIndex
from kbc.domain.models import FileFacts, Symbol

MAX_HOPS = 16


class SymbolTable:
    def __init__(self, files: Iterable[FileFacts]) -> None:
        self.symbols: dict[str, Symbol] = {}
        self.modules: dict[str, FileFacts] = {}
        self.bindings: dict[str, dict[str, str]] = {}
        self.stars: dict[str, list[str]] = {}
        for facts in sorted(files, key=lambda f: f.path):
            self.modules.setdefault(facts.module, facts)
            for symbol in facts.symbols:
                self.symbols.setdefault(symbol.qname, symbol)
            names = self.bindings.setdefault(facts.module, {})
            stars = self.stars.setdefault(facts.module, [])
            for imp in facts.imports:
                if not imp.module:
                    continue
                if imp.name == "*":
                    stars.append(imp.module)
                elif imp.name:
                    names.setdefault(imp.alias, f"{imp.module}.{imp.name}")
                else:
                    top = imp.module.split(".")[0]
                    names.setdefault(imp.alias, imp.alias if imp.alias == top else imp.module)
        self._memo: dict[str, str | None] = {}
        self._index = ModuleIndex(self.modules)
        self._deepest = max((m.count(".") + 1 for m in self.modules), default=1)
        # Every name a module can bind at its top: what resolution can ever find there. A name
        # that none binds is unresolved at once, without a walk through the star imports.
        self._bound = ({q.rsplit(".", 1)[-1] for q in self.symbols}
                       | {alias for names in self.bindings.values() for alias in names}
                       | {m.rsplit(".", 1)[-1] for m in self.modules})

    def module_of(self, dotted: str) -> str:
        return self._index.longest(dotted)

    def resolve(self, name: str) -> str | None:
        """The qname of the symbol or module ``name`` refers to, or None.

        A name is followed through aliases and star imports depth first, with
        an explicit stack: a chain of star imports as long as the repository's
        module count resolves without deep recursion, and a name already on
        the path (an alias or star-import cycle) counts as unresolved there.
        """
        known, answer = self._known(name)
        if known:
            return answer
        found, candidates = self._enter(name)
        if found is not None or not candidates:
            return self._settle(name, found)
        # An alias or star import puts a module in front of the rest of the name and never
        # lengthens the rest, but for a binding that names itself (``from .x import y as x``
        # where x is no module): a candidate longer than this is such a loop, left unresolved.
        longest = self._deepest + name.count(".") + 1
        stack = [(name, iter(candidates))]
        while stack:
            top, pending = stack[-1]
            if answer is not None:
                self._settle(top, answer)
                stack.pop()
                continue
            candidate = next(pending, None)
            if candidate is None:  # every way out of ``top`` failed: it stays unresolved
                stack.pop()
                continue
            known, answer = self._known(candidate)
            if known:
                continue
            if candidate.count(".") + 1 > longest:
                continue
            found, candidates = self._enter(candidate)
            if found is not None or not candidates:
                answer = self._settle(candidate, found)
            else:
                stack.append((candidate, iter(candidates)))
        return answer

    def _known(self, name: str) -> tuple[bool, str | None]:
        if name in self.symbols or name in self.modules:
            return True, name
        if name in self._memo:  # resolved before, or on the current path (a cycle)
            return True, self._memo[name]
        return False, None

    def _settle(self, name: str, answer: str | None) -> str | None:
        self._memo[name] = answer
        return answer

    def _enter(self, name: str) -> tuple[str | None, list[str]]:
        """What ``name`` resolves to directly, or else the names to try in its place, in order."""
        self._memo[name] = None  # on the path: a cycle back to it finds nothing
        module = self.module_of(name)
        if not module:
            return None, []
        rest = name[len(module) + 1:].split(".")
        if rest[0] not in self._bound:
            return None, []
        head = f"{module}.{rest[0]}"
        if head in self.symbols:
            return self._member(head, rest[1:]), []
        alias = self.bindings.get(module, {}).get(rest[0])
        if alias is not None and alias != head:
            return None, [".".join([alias, *rest[1:]])]
        return None, [".".join([star, *rest]) for star in self.stars.get(module, ())]

    def _member(self, owner: str, rest: list[str], hops: int = 0) -> str | None:
        """``owner.rest...`` where owner is a symbol: nested definitions, then base classes."""
        if not rest:
            return owner
        child = f"{owner}.{rest[0]}"
        if child in self.symbols:
            return self._member(child, rest[1:], hops)
        symbol = self.symbols.get(owner)
        if symbol is None or symbol.kind != "class" or hops >= MAX_HOPS:
            return None
        for base in symbol.bases:
            base_q = self.resolve(base)
            if base_q is not None and base_q in self.symbols:
                found = self._member(base_q, rest, hops + 1)
                if found is not None:
                    return found
        return None

    def resolve_call(self, facts: FileFacts, target: str, text: str) -> str | None:
        """The symbol a call in ``facts`` reaches, trying star imports for bare names."""
        if target:
            if target.startswith("builtins."):
                return None
            found = self.resolve(target)
        elif text and "(" not in text and "[" not in text:
            found = None
            for star in self.stars.get(facts.module, ()):
                found = self.resolve(f"{star}.{text}")
                if found is not None:
                    break
        else:
            return None
        return found if found in self.symbols else None
