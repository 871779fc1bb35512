"""Repository-wide name resolution over the linked facts: the one place a name is followed.

Per-file analysis names a call target as the file sees it (``pkg.foo`` after
``from pkg import foo``). Here that name is followed through re-exports
(``pkg/__init__.py`` importing ``foo`` from ``pkg.core``), star imports and
base classes (``self.save`` defined on a parent class) to the symbol that
defines it (:meth:`SymbolTable.resolve`: the call graph, retrieval's
neighbours and the names a task mentions).

The same walk answers a looser question, :meth:`SymbolTable.exists`: whether a
name is something the code has at all, a definition or a name bound without
one (a class field or variable, a module-level variable, an import from outside
the repository, a member of a base class outside the facts). Drift asks it of
the names a document mentions (:mod:`kbc.graph.mentions`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from kbc.analyzers.link import ModuleIndex
from kbc.analyzers.mentions import scope_bindings
from kbc.domain.models import FileFacts, Symbol

MAX_HOPS = 16
_OBJECT = frozenset({"object", "builtins.object"})
_ANNOTATION_NAME = re.compile(r"[A-Za-z_][\w.]*")
_NOT_A_CLASS = frozenset(
    {
        "None",
        "Optional",
        "Union",
        "typing.Optional",
        "typing.Union",
        "t.Optional",
        "t.Union",
        "Self",
        "typing.Self",
        "te.Self",
        "t.Any",
        "Any",
        "typing.Any",
    }
)


class SymbolTable:
    """The linked facts' modules, symbols and import bindings. ``read_source(path)`` gives a
    Python file's text, read only when :meth:`exists` asks after a variable the facts do not
    record (without it, variables are not known)."""

    def __init__(self, files: Iterable[FileFacts], read_source: Callable[[str], str] | None = None) -> None:
        self.symbols: dict[str, Symbol] = {}
        self.modules: dict[str, FileFacts] = {}
        self.bindings: dict[str, dict[str, str]] = {}
        self.stars: dict[str, list[str]] = {}
        self.fields: dict[str, set[str]] = {}  # class qname -> its fields
        self.external: dict[str, set[str]] = {}  # module -> names it binds to code outside the repository
        self._home: dict[str, str] = {}  # symbol qname -> its module
        for facts in sorted(files, key=lambda f: f.path):
            self.modules.setdefault(facts.module, facts)
            for symbol in facts.symbols:
                self.symbols.setdefault(symbol.qname, symbol)
                self._home.setdefault(symbol.qname, facts.module)
            for owned in facts.fields:
                self.fields.setdefault(owned.owner, set()).add(owned.name)
            names = self.bindings.setdefault(facts.module, {})
            stars = self.stars.setdefault(facts.module, [])
            outside = self.external.setdefault(facts.module, set())
            for imp in facts.imports:
                if not imp.module:
                    continue
                if imp.name == "*":
                    stars.append(imp.module)
                    continue
                if imp.name:
                    names.setdefault(imp.alias, f"{imp.module}.{imp.name}")
                else:
                    top = imp.module.split(".")[0]
                    names.setdefault(imp.alias, imp.alias if imp.alias == top else imp.module)
                if imp.kind != "internal":
                    outside.add(imp.alias)
        self.read_source = read_source
        self._scopes: dict[str, dict[str, frozenset[str]]] = {}
        self._memo: dict[str, str | None] = {}
        self._exists_memo: dict[str, str | None] = {}
        self._index = ModuleIndex(self.modules)
        self._deepest = max((m.count(".") + 1 for m in self.modules), default=1)
        # Every name a module can bind at its top: what resolution can ever find there. A name
        # that none binds is unresolved at once, without a walk through the star imports.
        self._bound = (
            {q.rsplit(".", 1)[-1] for q in self.symbols}
            | {alias for names in self.bindings.values() for alias in names}
            | {m.rsplit(".", 1)[-1] for m in self.modules}
        )
        # Modules and the packages above them (a folder of modules without an __init__ too).
        self.packages = frozenset(
            ".".join(parts[:end])
            for parts in (m.split(".") for m in self.modules if m)
            for end in range(1, len(parts) + 1)
        )

    def module_of(self, dotted: str) -> str:
        return self._index.longest(dotted)

    def resolve(self, name: str) -> str | None:
        """The qname of the symbol or module ``name`` refers to, or None."""
        return self._walk(name, lenient=False)

    def resolve_bound(self, name: str) -> str | None:
        """What ``name`` refers to, its package's own binding first: ``pipx.commands.install``
        is the function ``pipx/commands/__init__.py`` imports, not the submodule of that name
        (the binding is what ``from pipx import commands; commands.install`` reaches)."""
        parent, _, last = name.rpartition(".")
        binding = self.bindings.get(parent, {}).get(last) if parent else None
        found = self.resolve(binding) if binding else None
        return found if found is not None else self.resolve(name)

    def exists(self, name: str) -> bool:
        """Whether ``name`` is a module or package, a symbol, or a name bound in one (a field,
        a variable, an import from outside, a member inherited from outside the facts)."""
        return self._walk(name, lenient=True) is not None

    def _walk(self, name: str, *, lenient: bool) -> str | None:
        """``name`` followed through aliases and star imports depth first, with an explicit
        stack: a chain of star imports as long as the repository's module count resolves
        without deep recursion, and a name already on the path (an alias or star-import
        cycle) counts as unresolved there. ``lenient`` also accepts names bound without a
        definition (then the answer is where the walk stopped, not a definition)."""
        memo = self._exists_memo if lenient else self._memo
        known, answer = self._known(name, memo, lenient)
        if known:
            return answer
        found, candidates = self._enter(name, memo, lenient)
        if found is not None or not candidates:
            return self._settle(memo, name, found)
        # An alias or star import puts a module in front of the rest of the name and never
        # lengthens the rest, but for a binding that names itself (``from .x import y as x``
        # where x is no module): a candidate longer than this is such a loop, left unresolved.
        longest = self._deepest + name.count(".") + 1
        stack = [(name, iter(candidates))]
        while stack:
            top, pending = stack[-1]
            if answer is not None:
                self._settle(memo, top, answer)
                stack.pop()
                continue
            candidate = next(pending, None)
            if candidate is None:  # every way out of ``top`` failed: it stays unresolved
                stack.pop()
                continue
            known, answer = self._known(candidate, memo, lenient)
            if known:
                continue
            if candidate.count(".") + 1 > longest:
                continue
            found, candidates = self._enter(candidate, memo, lenient)
            if found is not None or not candidates:
                answer = self._settle(memo, candidate, found)
            else:
                stack.append((candidate, iter(candidates)))
        return answer

    def _known(self, name: str, memo: dict[str, str | None], lenient: bool) -> tuple[bool, str | None]:
        if name in self.symbols or name in self.modules or (lenient and name in self.packages):
            return True, name
        if name in memo:  # resolved before, or on the current path (a cycle)
            return True, memo[name]
        return False, None

    @staticmethod
    def _settle(memo: dict[str, str | None], name: str, answer: str | None) -> str | None:
        memo[name] = answer
        return answer

    def _enter(self, name: str, memo: dict[str, str | None], lenient: bool) -> tuple[str | None, list[str]]:
        """What ``name`` resolves to directly, or else the names to try in its place, in order."""
        memo[name] = None  # on the path: a cycle back to it finds nothing
        module = self.module_of(name)
        if not module:
            return None, []
        rest = name[len(module) + 1 :].split(".")
        if not lenient and rest[0] not in self._bound:
            return None, []
        head = f"{module}.{rest[0]}"
        if head in self.symbols:
            return self._member(head, rest[1:], lenient=lenient), []
        if lenient and rest[0] in self.external.get(module, ()):
            return name, []  # bound to code outside the repository: nothing to follow
        alias = self.bindings.get(module, {}).get(rest[0])
        if alias is not None and alias != head:
            return None, [".".join([alias, *rest[1:]])]
        if lenient and self._binds(module, rest[0]):
            return name, []
        return None, [".".join([star, *rest]) for star in self.stars.get(module, ())]

    def _binds(self, module: str, name: str) -> bool:
        """A module-level name without a definition: exported, served by ``__getattr__``, or
        bound by a statement (a variable)."""
        facts = self.modules.get(module)
        return (
            (facts is not None and name in (facts.exports or ()))
            or f"{module}.__getattr__" in self.symbols
            or name in self._scope_names(module, "")
        )

    def _member(self, owner: str, rest: list[str], hops: int = 0, *, lenient: bool = False) -> str | None:
        """``owner.rest...`` where owner is a symbol: nested definitions, then base classes
        (``lenient``: also fields and class variables, and any member of a function or of a
        base outside the facts)."""
        if not rest:
            return owner
        child = f"{owner}.{rest[0]}"
        if child in self.symbols:
            return self._member(child, rest[1:], hops, lenient=lenient)
        symbol = self.symbols.get(owner)
        if symbol is None or hops >= MAX_HOPS:
            return None
        if symbol.kind != "class":
            # ``adapter = self.get_adapter(url); adapter.send(...)`` reaches here as
            # ``Session.get_adapter.send``: a member of what the function is declared to return
            returned = self.returns(owner)
            found = self._member(returned, rest, hops + 1, lenient=lenient) if returned else None
            if found is not None:
                return found
            return owner if lenient else None  # an attribute of a function: nothing to check it against
        if lenient and (
            rest[0] in self.fields.get(owner, ()) or rest[0] in self._scope_names(self._home[owner], owner)
        ):
            return owner
        for base in symbol.bases:
            base_q = self.resolve(base)
            if base_q is not None and base_q in self.symbols:
                found = self._member(base_q, rest, hops + 1, lenient=lenient)
                if found is not None:
                    return found
            elif lenient and base not in _OBJECT:
                return owner  # inherits from code outside the facts: its members are unknown
        return None

    def returns(self, qname: str) -> str | None:
        """The class of the repository a function's return annotation names (``-> Response``,
        ``-> Optional[Response]``, ``-> "Response | None"``), resolved where it is defined."""
        symbol = self.symbols.get(qname)
        if symbol is None or " -> " not in symbol.signature:
            return None
        annotation = symbol.signature.rsplit(" -> ", 1)[1].replace('"', "").replace("'", "")
        for name in _ANNOTATION_NAME.findall(annotation):
            if name in _NOT_A_CLASS:
                continue
            found = self.resolve(f"{self._home[qname]}.{name}")
            if found is not None and found in self.symbols and self.symbols[found].kind == "class":
                return found
            return None
        return None

    def overriding(self) -> dict[str, list[str]]:
        """Method -> the methods of the same name in the classes that derive from its class
        directly (dunder methods left out)."""
        methods: dict[str, dict[str, str]] = {}  # class -> method name -> qname
        for symbol in self.symbols.values():
            if symbol.kind == "method" and symbol.parent:
                methods.setdefault(symbol.parent, {})[symbol.name] = symbol.qname
        found: dict[str, set[str]] = {}
        for qname, symbol in sorted(self.symbols.items()):
            if symbol.kind != "class":
                continue
            for base in symbol.bases:
                parent = self.resolve(base)
                if parent is None or parent not in methods:
                    continue
                for name, method in methods.get(qname, {}).items():
                    other = methods[parent].get(name)
                    if other is not None and not name.startswith("__"):
                        found.setdefault(other, set()).add(method)
        return {method: sorted(subs) for method, subs in sorted(found.items())}

    def _scope_names(self, module: str, owner: str) -> frozenset[str]:
        """Names bound in ``module`` at its top (``owner`` empty) or in the class ``owner``."""
        facts = self.modules.get(module)
        if facts is None or self.read_source is None:
            return frozenset()
        if facts.path not in self._scopes:
            self._scopes[facts.path] = scope_bindings(self.read_source(facts.path))
        return self._scopes[facts.path].get(owner[len(module) + 1 :] if owner else "", frozenset())

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
