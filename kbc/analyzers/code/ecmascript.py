"""Definitions in TypeScript and JavaScript, as projects write them.

Declared: classes, interfaces, enums, type aliases, functions and namespaces. Bound: a
``const``, ``let`` or ``var`` outside any function, or a CommonJS ``exports.name =``, is a
definition of its name when its value is a function (an arrow function or a function
expression), a class expression, an object literal holding functions (a namespace-like object),
or a call given a function (a factory: ``core.$constructor("X", (inst) => {...})``, a class
when its name is written like one, else a function); its span is the whole statement,
``export`` included. Any other value a module exports as a ``const`` (or a CommonJS export) is
a ``constant`` (``export const email: RegExp = /.../``), unless it only names another binding.

Members: a method, or a field holding a function, of a class that is a definition; a
function-valued property of an object that is one. A member of anything else (a class or
object that is passed, returned or assigned) is no symbol of its own, and a method is never a
top-level name. Names are not unique: an interface and a ``const`` of one name (declaration
merging) are two definitions of that name.
"""

from __future__ import annotations

from typing import Any

from kbc.analyzers.code.syntax import Defined, child, every, has_child, is_async, text, unquote
from kbc.domain.models import SymbolKind

DECLARED = frozenset(
    {
        "class_declaration",
        "abstract_class_declaration",
        "interface_declaration",
        "enum_declaration",
        "type_alias_declaration",
        "internal_module",  # namespace N {}
        "module",  # module N {}
    }
)
FUNCTIONS = frozenset({"function_declaration", "generator_function_declaration"})
# Nodes that may bind a name to a value: the walker is shown each.
BINDERS = frozenset(
    {
        "variable_declarator",
        "assignment_expression",
        "method_definition",
        "pair",
        "public_field_definition",
        "field_definition",
    }
)
_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_WRAPPED = frozenset(  # an expression around the value that does not change what it is
    {
        "as_expression",
        "satisfies_expression",
        "parenthesized_expression",
        "non_null_expression",
        "type_assertion",
    }
)
_FUNCTION_BODIES = frozenset({*_FUNCTION_VALUES, *FUNCTIONS, "method_definition", "class_static_block"})
_SPAN_WRAPPERS = frozenset({"export_statement", "ambient_declaration"})


def unwrapped(value: Any) -> Any:
    """The expression ``value`` is, past ``as``, ``satisfies``, ``!``, ``<T>`` and parentheses."""
    while value is not None and value.type in _WRAPPED:
        named = [c for c in value.named_children if c.type != "comment"]
        if not named:
            return None
        value = named[-1] if value.type == "type_assertion" else named[0]
    return value


def _pascal(name: str) -> bool:
    bare = name.lstrip("$_")
    return bare[:1].isupper()


class EcmaScript:
    def __init__(self, data: bytes, language: str) -> None:
        self.data = data
        self.language = language
        self._values: dict[tuple[int, int, str, bool], tuple[SymbolKind, Any] | None] = {}

    def scope_name(self, node: Any) -> str:
        return ""

    # -- what a value is -----------------------------------------------------

    def value_kind(self, value: Any, name: str) -> tuple[SymbolKind, Any] | None:
        """The kind of definition a bound ``value`` makes and the node its head ends at; None
        when it is data."""
        value = unwrapped(value)
        if value is None:
            return None
        key = (value.start_byte, value.end_byte, value.type, _pascal(name))  # a factory's kind is by name
        if key not in self._values:
            self._values[key] = self._value_kind(value, name)
        return self._values[key]

    def _value_kind(self, value: Any, name: str) -> tuple[SymbolKind, Any] | None:
        kind = value.type
        if kind in _FUNCTION_VALUES:
            return "function", value.child_by_field_name("body") or value
        if kind == "class":
            return "class", value.child_by_field_name("body") or value
        if kind == "object":
            holds = any(
                c.type == "method_definition"
                or c.type == "pair"
                and self.value_kind(c.child_by_field_name("value"), "") is not None
                for c in value.named_children
            )
            return ("class", value) if holds else None
        if kind == "call_expression":
            arguments = value.child_by_field_name("arguments")
            for argument in arguments.named_children if arguments is not None else ():
                made = unwrapped(argument)
                if made is not None and made.type in _FUNCTION_VALUES:
                    body = made.child_by_field_name("body") or made
                    return ("class" if _pascal(name) else "function"), body
        return None

    # -- definitions ---------------------------------------------------------

    def define(self, node: Any, scope: tuple[str, ...]) -> Defined | None:
        kind = node.type
        if kind in DECLARED:
            return self._declared(node, scope)
        if kind in FUNCTIONS:
            name = text(node.child_by_field_name("name"))
            return (
                self._defined(node, name, "function", scope, node.child_by_field_name("body"))
                if name
                else None
            )
        if kind == "variable_declarator":
            name_node = node.child_by_field_name("name")
            if name_node is None or name_node.type != "identifier" or _in_function(node):
                return None
            return self._bound(node, text(name_node), node.child_by_field_name("value"), scope, member=False)
        if kind == "assignment_expression":
            name = _exported_name(node)
            if not name or _in_function(node):
                return None
            return self._bound(node, name, node.child_by_field_name("right"), scope, member=False)
        if kind in ("method_definition", "pair", "public_field_definition", "field_definition"):
            return self._member(node, scope)
        return None

    def _declared(self, node: Any, scope: tuple[str, ...]) -> Defined | None:
        name_node = node.child_by_field_name("name")
        if name_node is None or name_node.type == "string":  # `declare module "x"`: no name
            return None
        return self._defined(node, text(name_node), "class", scope, node.child_by_field_name("body"))

    def _bound(
        self, node: Any, name: str, value: Any, scope: tuple[str, ...], member: bool
    ) -> Defined | None:
        found = self.value_kind(value, name)
        if found is None:
            if member or not _exported_value(node, value):
                return None
            return self._defined(node, name, "constant", scope, value)  # its head ends at its value
        kind, body = found
        if member and kind == "function":
            kind = "method"
        return self._defined(node, name, kind, scope, body, unwrapped(value))

    def _member(self, node: Any, scope: tuple[str, ...]) -> Defined | None:
        """A method, or a property or field bound to a function, of a class or object that is
        itself a definition."""
        holder = node.parent
        if holder is None or holder.type not in ("class_body", "object"):
            return None
        owner = holder.parent if holder.type == "class_body" else holder
        if owner is None or not self._is_definition(owner):
            return None
        name_node = node.child_by_field_name("name") or node.child_by_field_name("property")
        if node.type == "pair":
            name_node = node.child_by_field_name("key")
        name = unquote(text(name_node))
        if not name:
            return None
        if node.type == "method_definition":
            return self._defined(node, name, "method", scope, node.child_by_field_name("body"))
        return self._bound(node, name, node.child_by_field_name("value"), scope, member=True)

    def _is_definition(self, owner: Any) -> bool:
        """Whether a class or object literal is a definition: declared, or the value of a
        binding that is one."""
        if owner.type in DECLARED:
            return True
        binder = owner.parent
        while binder is not None and binder.type in _WRAPPED:
            binder = binder.parent
        if binder is None:
            return False
        if binder.type == "variable_declarator":
            named = binder.child_by_field_name("name")
            return named is not None and named.type == "identifier" and not _in_function(binder)
        if binder.type == "assignment_expression":
            return bool(_exported_name(binder)) and not _in_function(binder)
        if binder.type in ("pair", "public_field_definition", "field_definition"):
            holder = binder.parent
            if holder is None or holder.type not in ("class_body", "object"):
                return False
            return self._is_definition(holder.parent if holder.type == "class_body" else holder)
        return False

    def _defined(
        self, node: Any, name: str, kind: SymbolKind, scope: tuple[str, ...], body: Any, value: Any = None
    ) -> Defined:
        span = node
        declaration = node.parent
        if (
            node.type == "variable_declarator"
            and declaration is not None
            and declaration.type in ("lexical_declaration", "variable_declaration")
            and len([c for c in declaration.named_children if c.type == "variable_declarator"]) == 1
        ):
            span = declaration
        elif node.type == "assignment_expression" and declaration is not None:
            span = declaration  # the expression statement
        while span.parent is not None and span.parent.type in _SPAN_WRAPPERS:
            span = span.parent
        return Defined(
            name,
            kind,
            scope,
            span,
            body.start_byte if body is not None else span.end_byte,
            self._public(node, span, name),
            is_async(node, value),
            _bases(node, value),
        )

    def _public(self, node: Any, span: Any, name: str) -> bool:
        if node.type in ("method_definition", "public_field_definition", "field_definition", "pair"):
            return not name.startswith("#") and not has_child(node, "accessibility_modifier", "private")
        if node.type == "assignment_expression":
            return True  # exports.name = ...
        return span.type == "export_statement" or (
            span.parent is not None and span.parent.type == "export_statement"
        )


def _in_function(node: Any) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in _FUNCTION_BODIES:
            return True
        parent = parent.parent
    return False


def _exported_name(assignment: Any) -> str:
    """``name`` of ``exports.name = …`` or ``module.exports.name = …`` standing as a statement."""
    if assignment.parent is None or assignment.parent.type != "expression_statement":
        return ""
    left = assignment.child_by_field_name("left")
    if left is None or left.type != "member_expression":
        return ""
    target = text(left.child_by_field_name("object"))
    if target not in ("exports", "module.exports"):
        return ""
    return text(left.child_by_field_name("property"))


_NOT_A_VALUE = frozenset(  # names another binding's value, or holds none
    {"identifier", "member_expression", "subscript_expression", "assignment_expression", "undefined"}
)


def _exported_value(node: Any, value: Any) -> bool:
    """Whether a binding is a constant a module exports with a value of its own: ``export const
    email = /.../``, or CommonJS's ``exports.email = /.../`` (not an alias of another name, not
    ``exports.x = void 0``)."""
    value = unwrapped(value)
    if value is None or value.type in _NOT_A_VALUE:
        return False
    if value.type == "unary_expression" and value.children and value.children[0].type == "void":
        return False
    if node.type == "assignment_expression":
        return True  # `_exported_name` found it exported
    declaration = node.parent
    return (
        declaration is not None
        and declaration.type == "lexical_declaration"
        and bool(declaration.children)
        and declaration.children[0].type == "const"
        and declaration.parent is not None
        and declaration.parent.type == "export_statement"
    )


def _bases(node: Any, value: Any) -> tuple[str, ...]:
    owner = value if value is not None and value.type == "class" else node
    if owner.type not in (
        "class_declaration",
        "abstract_class_declaration",
        "class",
        "interface_declaration",
    ):
        return ()
    heritage = child(owner, {"class_heritage", "extends_type_clause"})
    if heritage is None:
        return ()
    return tuple(sorted({text(t) for t in every(heritage, {"identifier", "type_identifier"})}))
