"""Definitions in languages that declare them with a keyword of their own: Go, Java, Rust, C
and C++. A definition node is a class-like type or a function; a function is a method when the
syntax ties it to a type (a Go receiver, a C++ ``Type::name``) or it sits in a class, struct,
trait or ``impl``; a namespace or module scopes the names under it without being a symbol.
"""

from __future__ import annotations

from typing import Any

from kbc.analyzers.code.languages import Rules
from kbc.analyzers.code.syntax import Defined, child, every, has_type, head, is_async, text, type_name


class Declarations:
    def __init__(self, data: bytes, language: str, rules: Rules) -> None:
        self.data = data
        self.language = language
        self.rules = rules

    def scope_name(self, node: Any) -> str:
        if node.type == "impl_item":
            return type_name(node.child_by_field_name("type"))
        if node.type == "mod_item" and node.child_by_field_name("body") is None:
            return ""  # `mod name;`: the module is another file
        return text(node.child_by_field_name("name"))

    def define(self, node: Any, scope: tuple[str, ...]) -> Defined | None:
        kind = node.type
        if kind in self.rules.classes:
            name = self._class_name(node)
            return self._defined(node, name, "class", scope) if name else None
        if kind in self.rules.functions:
            if kind == "function_signature_item" and not self._in_trait(node):
                return None  # a foreign function's declaration, not a trait's method
            name, owners = self._function_name(node)
            if not name:
                return None
            if owners:  # a Go receiver or a C++ `Type::name` defined outside its class
                scope = (*scope, *owners)
            method = bool(scope) and (bool(owners) or self._in_type(node))
            return self._defined(node, name, "method" if method else "function", scope)
        return None

    def _defined(self, node: Any, name: str, kind: Any, scope: tuple[str, ...]) -> Defined:
        span = node
        while span.parent is not None and self._wraps(span.parent):
            span = span.parent
        body = span.child_by_field_name("body") or node.child_by_field_name("body")
        return Defined(
            name,
            kind,
            scope,
            span,
            body.start_byte if body is not None else span.end_byte,
            self._public(node, name),
            self.language == "rust" and is_async(node),
            self._bases(node) if kind == "class" else (),
        )

    def _wraps(self, parent: Any) -> bool:
        """Whether a definition's span is its parent's: a C++ template, the `type` of a Go type
        spec that stands alone."""
        return (
            parent.type in self.rules.wrappers
            or parent.type == "type_declaration"
            and len(parent.named_children) == 1
        )

    def _in_type(self, node: Any) -> bool:
        """Whether a function is a member of a class, struct, trait or impl (not a namespace)."""
        parent = node.parent
        while parent is not None:
            if parent.type in self.rules.classes or parent.type == "impl_item":
                return True
            if parent.type in self.rules.functions or parent.type in ("namespace_definition", "mod_item"):
                return False
            parent = parent.parent
        return False

    def _in_trait(self, node: Any) -> bool:
        parent = node.parent
        return parent is not None and parent.type == "declaration_list" and parent.parent.type == "trait_item"

    def _class_name(self, node: Any) -> str:
        if node.type == "enum_constant":  # a Java enum constant with a body of its own
            return text(node.child_by_field_name("name")) if node.child_by_field_name("body") else ""
        if node.type == "type_definition":  # typedef struct { ... } Name;
            body = node.child_by_field_name("type")
            if body is None or body.child_by_field_name("body") is None:
                return ""
            return text(node.child_by_field_name("declarator"))
        if node.type in ("struct_specifier", "enum_specifier", "union_specifier", "class_specifier"):
            if node.child_by_field_name("body") is None or (
                node.parent is not None and node.parent.type == "type_definition"
            ):
                return ""  # a use of the type, or the body of a typedef (named by the typedef)
        return text(node.child_by_field_name("name"))

    def _function_name(self, node: Any) -> tuple[str, tuple[str, ...]]:
        """The function's name, and the types (a C++ name's namespaces and class) it is defined
        on when the syntax says so."""
        kind = node.type
        if kind == "method_declaration" and self.language == "go":
            receiver = node.child_by_field_name("receiver")
            owner = type_name(receiver)
            return text(node.child_by_field_name("name")), (owner,) if owner else ()
        if kind == "function_definition":  # C, C++: the name sits in the declarator
            declarator = node.child_by_field_name("declarator")
            while declarator is not None and declarator.type != "function_declarator":
                inner = declarator.child_by_field_name("declarator")
                if inner is None and declarator.type == "reference_declarator":  # `T& Foo::f()`
                    inner = next(iter(declarator.named_children), None)
                declarator = inner
            if declarator is None:
                return "", ()
            name = declarator.child_by_field_name("declarator")
            owners: list[str] = []
            while name is not None and name.type == "qualified_identifier":  # `ns::Foo<T>::bar`
                owner = text(name.child_by_field_name("scope")).split("<")[0]
                owners.extend(part for part in owner.split("::") if part)
                name = name.child_by_field_name("name")
            return text(name), tuple(owners)
        return text(node.child_by_field_name("name")), ()

    def _public(self, node: Any, name: str) -> bool:
        language = self.language
        if language == "go":
            return name[:1].isupper()
        if language == "rust":
            return has_type(node, "visibility_modifier")
        if language == "java":
            modifiers = child(node, {"modifiers"})
            return modifiers is not None and "public" in text(modifiers).split()
        if language in ("c", "cpp"):  # the definition's own head, not its template's
            body = node.child_by_field_name("body")
            end = body.start_byte if body is not None else node.end_byte
            return not head(self.data, node.start_byte, end).startswith("static ")
        return True

    def _bases(self, node: Any) -> tuple[str, ...]:
        for field_name in ("superclass", "interfaces", "base_class_clause"):
            found = node.child_by_field_name(field_name)
            if found is not None:
                return tuple(text(t) for t in found.named_children if t.type.endswith("identifier"))
        inherits = node.type in ("class_declaration", "class_specifier", "struct_specifier")
        heritage = child(node, {"base_class_clause"}) if inherits else None
        if heritage is not None:
            return tuple(sorted({text(t) for t in every(heritage, {"identifier", "type_identifier"})}))
        return ()
