"""Scopes and name bindings: enough name resolution to name call targets.

libcst's generic ``QualifiedNameProvider`` costs many times a parse. The facts
pass needs less: which names a scope binds (imports, definitions, simple
assignments, annotated parameters, ``self``/``cls``) and, once the file is
read, what a dotted name such as ``self.repo.save`` or ``client.get`` refers
to. Resolution is deferred to the end of the file, as Python resolves names
when a function runs, not where it is written.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field

BUILTINS = frozenset(dir(builtins))

REF = 0  # the name refers to ``value`` (a module, class, function, ...)
ALIAS = 1  # the name is bound to the dotted expression ``parts``, resolved in ``scope``
INSTANCE_OF = 2  # the name holds an instance of what ``parts`` resolves to
INSTANCE = 3  # the name holds an instance of the class ``value`` (``self``)
LOCAL = 4  # a local value kbc cannot follow
GLOBAL = 5  # declared ``global``: look it up in the module scope


@dataclass(slots=True, eq=False)
class Binding:
    kind: int
    value: str = ""
    parts: tuple[str, ...] = ()
    scope: Scope | None = None


@dataclass(slots=True, eq=False)
class Scope:
    kind: str  # module | class | function
    qname: str
    parent: Scope | None
    bindings: dict[str, Binding] = field(default_factory=dict)
    # class scopes: attributes assigned through self (``self.client = Client()``)
    attrs: dict[str, Binding] = field(default_factory=dict)

    def bind(self, name: str, binding: Binding) -> None:
        current = self.bindings.get(name)
        if current is not None and current.kind == GLOBAL:
            module = self.module()
            if module is not self:
                module.bind(name, binding)
            return
        self.bindings[name] = binding

    def module(self) -> Scope:
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope


@dataclass(frozen=True, slots=True)
class Resolved:
    qname: str
    instance: bool  # an instance of the class ``qname`` rather than ``qname`` itself


class Resolver:
    """Resolves dotted names against the scopes of one file."""

    def __init__(self, classes: dict[str, Scope]) -> None:
        self.classes = classes  # class qname -> its scope, for attributes set through self
        self._depth = 0

    def binder(self, name: str, scope: Scope) -> Scope | None:
        """The scope whose binding of ``name`` a read in ``scope`` sees (for a ``global``
        name, the module), or None where nothing binds it."""
        current: Scope | None = scope
        while current is not None:
            if current.kind != "class" or current is scope:
                binding = current.bindings.get(name)
                if binding is not None:
                    return current.module() if binding.kind == GLOBAL else current
            current = current.parent
        return None

    def lookup(self, name: str, scope: Scope) -> Binding | None:
        holder = self.binder(name, scope)
        return holder.bindings.get(name) if holder is not None else None

    def resolve(self, parts: tuple[str, ...], scope: Scope) -> Resolved | None:
        if not parts or self._depth > 12:
            return None
        binding = self.lookup(parts[0], scope)
        if binding is None:
            if parts[0] in BUILTINS:
                return Resolved("builtins." + ".".join(parts), False)
            return None
        base = self._binding_target(binding)
        if base is None:
            return None
        rest = parts[1:]
        if base.instance and rest:
            followed = self._instance_attribute(base.qname, rest)
            if followed is not None:
                return followed
            return Resolved(".".join((base.qname, *rest)), False)
        if rest:
            return Resolved(".".join((base.qname, *rest)), False)
        return base

    def _binding_target(self, binding: Binding) -> Resolved | None:
        if binding.kind == REF:
            return Resolved(binding.value, False)
        if binding.kind == INSTANCE:
            return Resolved(binding.value, True)
        if binding.kind in (ALIAS, INSTANCE_OF) and binding.scope is not None:
            self._depth += 1
            try:
                target = self.resolve(binding.parts, binding.scope)
            finally:
                self._depth -= 1
            if target is None:
                return None
            if binding.kind == INSTANCE_OF:
                return Resolved(target.qname, True)
            return target
        return None

    def _instance_attribute(self, cls: str, rest: tuple[str, ...]) -> Resolved | None:
        """``obj.attr.more`` where obj is an instance of a class of this file."""
        class_scope = self.classes.get(cls)
        if class_scope is None:
            return None
        target = None
        # what `self.attr = ...` binds, else the class body's own `attr = ...` (a default an
        # instance may override with a value this file cannot follow, such as a parameter)
        for attr in (class_scope.attrs.get(rest[0]), class_scope.bindings.get(rest[0])):
            if attr is not None and attr.kind in (REF, ALIAS, INSTANCE, INSTANCE_OF):
                target = self._binding_target(attr)
                if target is not None:
                    break
        if target is None:
            return None
        if len(rest) == 1:
            return target
        if target.instance:
            nested = self._instance_attribute(target.qname, rest[1:])
            if nested is not None:
                return nested
        return Resolved(".".join((target.qname, *rest[1:])), False)
