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

    def module_of(self, dotted: str) -> str:
        return self._index.longest(dotted)

    def resolve(self, name: str) -> str | None:
        """The qname of the symbol or module ``name`` refers to, or None."""
        if name in self.symbols or name in self.modules:
            return name
        if name in self._memo:
            return self._memo[name]
        self._memo[name] = None  # guards against alias cycles
        result = self._resolve(name)
        self._memo[name] = result
        return result

    def _resolve(self, name: str) -> str | None:
        module = self.module_of(name)
        if not module:
            return None
        rest = name[len(module) + 1:].split(".")
        head = f"{module}.{rest[0]}"
        if head in self.symbols:
            return self._member(head, rest[1:])
        alias = self.bindings.get(module, {}).get(rest[0])
        if alias is not None and alias != head:
            return self.resolve(".".join([alias, *rest[1:]]))
        for star in self.stars.get(module, ()):
            found = self.resolve(".".join([star, *rest]))
            if found is not None:
                return found
        return None

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
