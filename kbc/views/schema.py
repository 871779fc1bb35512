"""JSON Schemas of every view kind: the whole document, and the interpretation an LLM returns."""

from __future__ import annotations

from typing import Any

from kbc.domain.views import VIEW_KINDS, ViewKind

_TEXT = {"type": "string"}
_TEXTS = {"type": "array", "items": _TEXT}
_LOCATION = {"type": "string", "pattern": r"^[^\s:][^:]*:\d+(-\d+)?$"}


def _object(properties: dict[str, Any], required: list[str] | None = None,
            extra: bool = False) -> dict[str, Any]:
    return {"type": "object", "properties": properties,
            "required": sorted(properties) if required is None else required,
            "additionalProperties": extra}


def _items(key: str, key_type: dict[str, Any], prose: str) -> dict[str, Any]:
    return {"type": "array", "items": _object({key: key_type, prose: _TEXT})}


# What the LLM writes for each kind. Keyed items (by name or step number) must name an item
# of the facts; the grounding check drops those that do not.
INTERPRETATION: dict[ViewKind, dict[str, Any]] = {
    "architecture": _object({"overview": _TEXT, "design_decisions": _TEXTS}),
    "module": _object({"purpose": _TEXT, "responsibilities": _TEXTS, "collaborators": _TEXTS}),
    "feature": _object({"summary": _TEXT}),
    "workflow": _object({"summary": _TEXT, "steps": _items("n", {"type": "integer"}, "explanation")}),
    "entry_points": _object({"summary": _TEXT}),
    "domain_concepts": _object({"concepts": _items("name", _TEXT, "meaning")}),
    "business_rules": _object({"rules": _items("n", {"type": "integer"}, "rule")}),
    "integrations": _object({"integrations": _items("name", _TEXT, "role")}),
}

_ENTRY = _object({"kind": _TEXT, "name": _TEXT, "target": _TEXT, "location": _LOCATION,
                  "detail": _TEXT, "runs": _LOCATION}, required=["kind", "name", "target", "location"])
_SYMBOL_REF = _object({"qname": _TEXT, "location": _LOCATION})
_SYMBOL = _object({"qname": _TEXT, "kind": _TEXT, "signature": _TEXT, "location": _LOCATION, "doc": _TEXT},
                  required=["qname", "kind", "signature", "location"])
_COUNT = {"type": "integer", "minimum": 0}
_NAMED_COUNT = {"type": "array", "items": _object({"module": _TEXT, "imports": _COUNT})}

FACTS: dict[ViewKind, dict[str, Any]] = {
    "architecture": _object({
        "repository": _TEXT, "files": _COUNT, "python_files": _COUNT,
        "packages": {"type": "array", "items": _object({"name": _TEXT, "files": _COUNT})},
        "layers": {"type": "array", "items": _TEXTS},
        "modules": {"type": "array", "items": _object({"name": _TEXT, "files": _COUNT,
                                                       "centrality": {"type": "number"}})},
        "dependencies": {"type": "array", "items": _object({"source": _TEXT, "target": _TEXT,
                                                            "imports": _COUNT})},
        "import_cycles": {"type": "array", "items": _TEXTS},
        "entry_points": {"type": "array", "items": _ENTRY},
        "integrations": {"type": "array", "items": _object({"kind": _TEXT, "name": _TEXT, "uses": _COUNT})},
        "external": {"type": "array", "items": _object({"distribution": _TEXT, "modules": _COUNT})},
    }),
    "module": _object({
        "name": _TEXT, "files": _TEXTS, "modules": _TEXTS,
        "symbols": {"type": "array", "items": _SYMBOL},
        "imports_out": _NAMED_COUNT, "imports_in": _NAMED_COUNT, "external": _TEXTS,
        "centrality": _object({"pagerank": {"type": "number"}, "fan_in": _COUNT, "fan_out": _COUNT}),
        "entry_points": {"type": "array", "items": _ENTRY}, "doc": _TEXT,
    }, required=["name", "files", "modules", "symbols", "imports_out", "imports_in", "external",
                 "centrality", "entry_points"]),
    "feature": _object({"name": _TEXT, "entry_points": {"type": "array", "items": _ENTRY},
                        "modules": _TEXTS, "symbols": {"type": "array", "items": _SYMBOL_REF}}),
    "workflow": _object({
        "entry_point": _ENTRY, "depth": _COUNT, "truncated": {"type": "boolean"},
        "also_via": {"type": "array", "items": _ENTRY},
        "steps": {"type": "array", "items": _object(
            {"n": _COUNT, "depth": _COUNT, "symbol": _TEXT, "location": _LOCATION,
             "called_at": _LOCATION, "doc": _TEXT}, required=["n", "depth", "symbol", "location"])},
    }),
    "entry_points": _object({"entry_points": {"type": "array", "items": _ENTRY}}),
    "domain_concepts": _object({
        "group": _TEXT, "omitted": _COUNT,
        "concepts": {"type": "array", "items": _object({
            "name": _TEXT, "kind": _TEXT, "location": _LOCATION, "bases": _TEXTS, "doc": _TEXT,
            "fields": {"type": "array", "items": _object(
                {"name": _TEXT, "line": _COUNT, "annotation": _TEXT, "default": _TEXT},
                required=["name", "line"])},
            "created_at": {"type": "array", "items": _LOCATION}, "used_by": _TEXTS,
        }, required=["name", "kind", "location", "fields", "created_at", "used_by"])},
    }),
    "business_rules": _object({
        "group": _TEXT, "omitted": _COUNT,
        "rules": {"type": "array", "items": _object({
            "n": _COUNT, "kind": {"enum": ["raise", "assert", "reject", "limit"]}, "condition": _TEXT,
            "symbol": _TEXT, "location": _LOCATION, "outcome": _TEXT, "message": _TEXT, "limits": _TEXTS,
        }, required=["n", "kind", "condition", "symbol", "location"])},
    }),
    "integrations": _object({
        "omitted": _COUNT,
        "integrations": {"type": "array", "items": _object({
            "kind": _TEXT, "name": _TEXT, "uses": _COUNT,
            "places": {"type": "array", "items": _LOCATION}, "symbols": _TEXTS})},
    }),
}


def view_schema(kind: ViewKind) -> dict[str, Any]:
    """The JSON Schema of a whole stored view of ``kind``."""
    return _object({
        "id": _TEXT,
        "kind": {"const": kind},
        "title": _TEXT,
        "facts": FACTS[kind],
        "interpretation": INTERPRETATION[kind],
        "provenance": _object({"source": {"enum": ["llm", "docstring", "none"]}, "model": _TEXT,
                               "prompt_version": _TEXT, "facts_hash": _TEXT}),
        "grounding": _object({"checked": _COUNT, "removed": _COUNT, "ungrounded": _TEXTS}),
    })


def schema_errors(schema: dict[str, Any], document: Any) -> list[str]:
    """Every way ``document`` breaks ``schema``, each with the JSON path where it happens."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}" for e in errors]


assert set(INTERPRETATION) == set(FACTS) == set(VIEW_KINDS)
