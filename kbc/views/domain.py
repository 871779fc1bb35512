"""Facts of the domain views: concepts (classes and their fields), business rules (guards),
integrations (external services, packages and environment variables)."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from kbc.domain.models import ClassField, Edge, FileFacts, Guard, Symbol
from kbc.views.context import MAX_LIST, Context, location

MAX_RULES = 150
MAX_PLACES = 10
_DATACLASS_DECORATORS = ("dataclass", "define", "frozen", "attr.s", "attrs", "mutable")
_KIND_BY_BASE = (
    (("Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"), "enum"),
    (("BaseModel", "Model", "Document", "Schema", "DeclarativeBase", "Base"), "model"),
    (("TypedDict",), "typed_dict"),
    (("NamedTuple",), "named_tuple"),
)
_NOT_CONCEPTS = ("Error", "Exception", "Warning", "TestCase", "Test")


def concept_kind(symbol: Symbol, fields: int) -> str:
    """What kind of domain concept a class is, or "" when it is not one."""
    if symbol.kind != "class" or not symbol.public:
        return ""
    short_bases = [b.rsplit(".", 1)[-1] for b in symbol.bases]
    if any(b.endswith(_NOT_CONCEPTS) for b in short_bases) or symbol.name.endswith(_NOT_CONCEPTS):
        return ""
    decorators = [d.split("(", 1)[0] for d in symbol.decorators]
    if any(d == name or d.endswith("." + name) for d in decorators for name in _DATACLASS_DECORATORS):
        return "dataclass"
    for names, kind in _KIND_BY_BASE:
        if any(b in names for b in short_bases):
            return kind
    return "class" if fields >= 2 else ""


def _fields(items: list[ClassField]) -> list[dict[str, Any]]:
    out = []
    for item in items:
        data: dict[str, Any] = {"name": item.name, "line": item.line}
        if item.annotation:
            data["annotation"] = item.annotation
        if item.default:
            data["default"] = item.default
        out.append(data)
    return out


def edges_into(context: Context) -> dict[str, list[Edge]]:
    into: dict[str, list[Edge]] = defaultdict(list)
    for edge in context.graph.call_edges:
        into[edge.target].append(edge)
    return into


def _source_group_files(context: Context, group: str) -> list[FileFacts]:
    source = {f.path for f in context.source_files()}
    return [f for f in context.group_files(group) if f.path in source]


def domain_concepts_facts(
    context: Context, group: str, calls_into: dict[str, list[Edge]] | None = None
) -> dict[str, Any]:
    into = calls_into if calls_into is not None else edges_into(context)
    concepts = []
    for facts in _source_group_files(context, group):
        by_owner: dict[str, list[ClassField]] = defaultdict(list)
        for item in facts.fields:
            by_owner[item.owner].append(item)
        for symbol in facts.symbols:
            kind = concept_kind(symbol, len(by_owner.get(symbol.qname, ())))
            if not kind:
                continue
            edges = sorted(into.get(symbol.qname, ()), key=lambda e: (e.path, e.lines, e.source))
            concept: dict[str, Any] = {
                "name": symbol.qname,
                "kind": kind,
                "location": location(facts.path, symbol.start_line, symbol.end_line),
                "fields": _fields(by_owner.get(symbol.qname, [])),
                "created_at": [location(e.path, e.lines[0]) for e in edges if e.lines][:MAX_PLACES],
                "used_by": sorted({e.source for e in edges})[:MAX_PLACES],
            }
            if symbol.bases:
                concept["bases"] = list(symbol.bases)
            if symbol.doc:
                concept["doc"] = symbol.doc
            concepts.append(concept)
    return {"group": group, "concepts": concepts[:MAX_LIST], "omitted": max(0, len(concepts) - MAX_LIST)}


# Dunders whose guards check what a caller asks for (a constructor's arguments); the other
# dunders implement a protocol (``__eq__``, ``__len__``, ``__getitem__``), whose guards are not
# the domain's rules.
_RULE_DUNDERS = frozenset({"__init__", "__new__", "__post_init__", "__call__"})
_TYPE_CHECK = re.compile(r"^(isinstance|issubclass|callable|hasattr)\(|^type\(.*\)\s*(is|==|!=|in)\b")
_JOINS = re.compile(r"\s+(?:and|or)\s+")
_RERAISE = re.compile(r"^raise(\s+[a-z_][a-z0-9_]*)?$")


def _type_check(condition: str) -> bool:
    """Every part of the condition is a type check: ``not isinstance(x, str)``, ``callable(f)``."""
    text = condition.strip()
    while text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    parts = [p.strip().removeprefix("not ").strip().strip("()") for p in _JOINS.split(text)]
    return all(_TYPE_CHECK.match(p) for p in parts)


def is_rule(guard: Guard) -> bool:
    """A guard that is a rule of the domain: not one in a protocol method (``__eq__``'s
    ``len(other) != len(self)``), not an argument-type check (``isinstance``, ``callable``, a
    ``TypeError`` raised), not a re-raise of what was caught (``raise``, ``raise exc``)."""
    name = guard.symbol.rpartition(".")[2]
    if name.startswith("__") and name.endswith("__") and name not in _RULE_DUNDERS:
        return False
    if _type_check(guard.condition) or guard.outcome.startswith(("raise TypeError", "raise TypeError(")):
        return False
    return not (guard.kind == "raise" and _RERAISE.match(guard.outcome.strip()))


def business_rules_facts(context: Context, group: str) -> dict[str, Any]:
    """The guards of the group's product code that are rules (:func:`is_rule`)."""
    rules = []
    for facts in _source_group_files(context, group):
        for guard in filter(is_rule, facts.guards):
            rule: dict[str, Any] = {
                "kind": guard.kind,
                "condition": guard.condition,
                "symbol": guard.symbol,
                "location": location(facts.path, guard.line, guard.end_line),
            }
            if guard.outcome:
                rule["outcome"] = guard.outcome
            if guard.message:
                rule["message"] = guard.message
            if guard.limits:
                rule["limits"] = list(guard.limits)
            rules.append(rule)
    # Rules that reject come before bare limits; source order within each.
    ordered = [r for r in rules if r["kind"] != "limit"] + [r for r in rules if r["kind"] == "limit"]
    kept = ordered[:MAX_RULES]
    for number, rule in enumerate(kept, 1):
        rule["n"] = number
    return {"group": group, "rules": kept, "omitted": max(0, len(rules) - MAX_RULES)}


def integrations_facts(context: Context) -> dict[str, Any]:
    places: dict[tuple[str, str], list[tuple[str, int, str]]] = defaultdict(list)
    for facts in context.source_files():
        for item in facts.integrations:
            places[(item.kind, item.name)].append((facts.path, item.line, item.symbol))
    found: list[dict[str, Any]] = []
    for (kind, name), where in sorted(places.items()):
        where.sort()
        found.append(
            {
                "kind": kind,
                "name": name,
                "uses": len(where),
                "places": [location(p, line) for p, line, _ in where[:MAX_PLACES]],
                "symbols": sorted({s for _, _, s in where if s})[:MAX_PLACES],
            }
        )
    ranked = sorted(found, key=lambda i: (i["kind"] == "package", -int(i["uses"]), i["kind"], i["name"]))
    return {
        "integrations": sorted(ranked[: MAX_LIST * 2], key=lambda i: (i["kind"], i["name"])),
        "omitted": max(0, len(found) - MAX_LIST * 2),
    }
