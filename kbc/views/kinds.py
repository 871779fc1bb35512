"""Every view kind, defined once: its facts' and its interpretation's JSON Schemas, what the LLM
is asked to write, its heading in the rendered index and its template. The schema checks, the
prose prompts, the renderer and the CLI's choices all read these definitions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kbc.domain.views import VIEW_KINDS, ViewKind

Schema = dict[str, Any]

_TEXT = {"type": "string"}
_TEXTS = {"type": "array", "items": _TEXT}
_LOCATION = {"type": "string", "pattern": r"^[^\s:][^:]*:\d+(-\d+)?$"}


def _object(
    properties: dict[str, Any], required: list[str] | None = None, extra: bool = False
) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": sorted(properties) if required is None else required,
        "additionalProperties": extra,
    }


def _items(key: str, key_type: dict[str, Any], prose: str) -> dict[str, Any]:
    return {"type": "array", "items": _object({key: key_type, prose: _TEXT})}


_ENTRY = _object(
    {
        "kind": _TEXT,
        "name": _TEXT,
        "target": _TEXT,
        "location": _LOCATION,
        "detail": _TEXT,
        "runs": _LOCATION,
    },
    required=["kind", "name", "target", "location"],
)
_SYMBOL_REF = _object({"qname": _TEXT, "location": _LOCATION})
_SYMBOL = _object(
    {"qname": _TEXT, "kind": _TEXT, "signature": _TEXT, "location": _LOCATION, "doc": _TEXT},
    required=["qname", "kind", "signature", "location"],
)
_COUNT = {"type": "integer", "minimum": 0}
_NAMED_COUNT = {"type": "array", "items": _object({"module": _TEXT, "imports": _COUNT})}


@dataclass(frozen=True, slots=True)
class KindDefinition:
    """One kind of view. Keyed items of the interpretation (by name or step number) must name
    an item of the facts; the grounding check drops those that do not."""

    kind: ViewKind
    heading: str  # its section in the rendered index
    facts: Schema  # what the code says, checked before a view is stored
    interpretation: Schema  # what the LLM writes (or the docstrings fill)
    guidance: str  # what the LLM is asked to write, field by field

    @property
    def template(self) -> str:
        """The jinja2 template (in ``kbc/views/templates``) that renders a view of this kind."""
        return f"{self.kind}.md.j2"

    @property
    def prose_fields(self) -> tuple[str, ...]:
        """The interpretation's fields, sorted."""
        return tuple(sorted(self.interpretation["properties"]))


KINDS: dict[ViewKind, KindDefinition] = {
    definition.kind: definition
    for definition in (
        KindDefinition(
            "architecture",
            "Architecture",
            facts=_object(
                {
                    "repository": _TEXT,
                    "files": _COUNT,
                    "python_files": _COUNT,
                    "languages": {"type": "array", "items": _object({"language": _TEXT, "files": _COUNT})},
                    "roles": {"type": "array", "items": _object({"role": _TEXT, "files": _COUNT})},
                    "packages": {"type": "array", "items": _object({"name": _TEXT, "files": _COUNT})},
                    "layers": {"type": "array", "items": _TEXTS},
                    "modules": {
                        "type": "array",
                        "items": _object({"name": _TEXT, "files": _COUNT, "centrality": {"type": "number"}}),
                    },
                    "dependencies": {
                        "type": "array",
                        "items": _object({"source": _TEXT, "target": _TEXT, "imports": _COUNT}),
                    },
                    "import_cycles": {
                        "type": "array",
                        "items": _object(
                            {
                                "modules": _TEXTS,
                                "closing": _COUNT,
                                "closed_by": {
                                    "type": "array",
                                    "items": _object(
                                        {"source": _TEXT, "target": _TEXT, "location": _LOCATION},
                                        required=["source", "target"],
                                    ),
                                },
                            }
                        ),
                    },
                    "entry_points": {"type": "array", "items": _ENTRY},
                    "integrations": {
                        "type": "array",
                        "items": _object({"kind": _TEXT, "name": _TEXT, "uses": _COUNT}),
                    },
                    "external": {
                        "type": "array",
                        "items": _object({"distribution": _TEXT, "modules": _COUNT}),
                    },
                }
            ),
            interpretation=_object({"overview": _TEXT, "design_decisions": _TEXTS}),
            guidance=(
                "overview: 3 to 6 sentences on what the repository does and how its packages "
                "and layers fit together. design_decisions: the key design decisions the facts "
                "show (layering, entry points, integrations), one sentence each."
            ),
        ),
        KindDefinition(
            "module",
            "Modules",
            facts=_object(
                {
                    "name": _TEXT,
                    "files": _TEXTS,
                    "modules": _TEXTS,
                    "symbols": {"type": "array", "items": _SYMBOL},
                    "imports_out": _NAMED_COUNT,
                    "imports_in": _NAMED_COUNT,
                    "external": _TEXTS,
                    "centrality": _object(
                        {"pagerank": {"type": "number"}, "fan_in": _COUNT, "fan_out": _COUNT}
                    ),
                    "entry_points": {"type": "array", "items": _ENTRY},
                    "doc": _TEXT,
                },
                required=[
                    "name",
                    "files",
                    "modules",
                    "symbols",
                    "imports_out",
                    "imports_in",
                    "external",
                    "centrality",
                    "entry_points",
                ],
            ),
            interpretation=_object({"purpose": _TEXT, "responsibilities": _TEXTS, "collaborators": _TEXTS}),
            guidance=(
                "purpose: one or two sentences on what this module group is for. responsibilities: "
                "what it does, one short item each. collaborators: the modules it works with and why, "
                "one item each."
            ),
        ),
        KindDefinition(
            "feature",
            "Features",
            facts=_object(
                {
                    "name": _TEXT,
                    "entry_points": {"type": "array", "items": _ENTRY},
                    "modules": _TEXTS,
                    "symbols": {"type": "array", "items": _SYMBOL_REF},
                }
            ),
            interpretation=_object({"summary": _TEXT}),
            guidance=(
                "summary: 2 to 4 sentences on what this capability does for a user, and through "
                "which entry points."
            ),
        ),
        KindDefinition(
            "workflow",
            "Workflows",
            facts=_object(
                {
                    "entry_point": _ENTRY,
                    "depth": _COUNT,
                    "truncated": {"type": "boolean"},
                    "also_via": {"type": "array", "items": _ENTRY},
                    "steps": {
                        "type": "array",
                        "items": _object(
                            {
                                "n": _COUNT,
                                "depth": _COUNT,
                                "symbol": _TEXT,
                                "location": _LOCATION,
                                "called_at": _LOCATION,
                                "doc": _TEXT,
                            },
                            required=["n", "depth", "symbol", "location"],
                        ),
                    },
                }
            ),
            interpretation=_object(
                {"summary": _TEXT, "steps": _items("n", {"type": "integer"}, "explanation")}
            ),
            guidance=(
                "summary: 1 to 3 sentences on what happens when this entry point runs. steps: for "
                "the important steps (by their number n), what the step does, one sentence each."
            ),
        ),
        KindDefinition(
            "entry_points",
            "Entry points",
            facts=_object(
                {
                    "entry_points": {"type": "array", "items": _ENTRY},
                    "examples": {"type": "array", "items": _ENTRY},
                },
                required=["entry_points"],
            ),
            interpretation=_object({"summary": _TEXT}),
            guidance=("summary: 1 to 3 sentences on the ways into this repository and who uses each."),
        ),
        KindDefinition(
            "domain_concepts",
            "Domain concepts",
            facts=_object(
                {
                    "group": _TEXT,
                    "omitted": _COUNT,
                    "concepts": {
                        "type": "array",
                        "items": _object(
                            {
                                "name": _TEXT,
                                "kind": _TEXT,
                                "location": _LOCATION,
                                "bases": _TEXTS,
                                "doc": _TEXT,
                                "fields": {
                                    "type": "array",
                                    "items": _object(
                                        {
                                            "name": _TEXT,
                                            "line": _COUNT,
                                            "annotation": _TEXT,
                                            "default": _TEXT,
                                        },
                                        required=["name", "line"],
                                    ),
                                },
                                "created_at": {"type": "array", "items": _LOCATION},
                                "used_by": _TEXTS,
                            },
                            required=["name", "kind", "location", "fields", "created_at", "used_by"],
                        ),
                    },
                }
            ),
            interpretation=_object({"concepts": _items("name", _TEXT, "meaning")}),
            guidance=(
                "concepts: for each concept (by its exact name), what it means in the "
                "domain, one or two sentences."
            ),
        ),
        KindDefinition(
            "business_rules",
            "Business rules",
            facts=_object(
                {
                    "group": _TEXT,
                    "omitted": _COUNT,
                    "rules": {
                        "type": "array",
                        "items": _object(
                            {
                                "n": _COUNT,
                                "kind": {"enum": ["raise", "assert", "reject", "limit"]},
                                "condition": _TEXT,
                                "symbol": _TEXT,
                                "location": _LOCATION,
                                "outcome": _TEXT,
                                "message": _TEXT,
                                "limits": _TEXTS,
                            },
                            required=["n", "kind", "condition", "symbol", "location"],
                        ),
                    },
                }
            ),
            interpretation=_object({"rules": _items("n", {"type": "integer"}, "rule")}),
            guidance=(
                "rules: for each rule (by its number n), the rule in plain words: what is "
                "required or refused, and what happens otherwise. One sentence each."
            ),
        ),
        KindDefinition(
            "integrations",
            "Integrations",
            facts=_object(
                {
                    "omitted": _COUNT,
                    "integrations": {
                        "type": "array",
                        "items": _object(
                            {
                                "kind": _TEXT,
                                "name": _TEXT,
                                "uses": _COUNT,
                                "places": {"type": "array", "items": _LOCATION},
                                "symbols": _TEXTS,
                            }
                        ),
                    },
                }
            ),
            interpretation=_object({"integrations": _items("name", _TEXT, "role")}),
            guidance=(
                "integrations: for each integration (by its exact name), its role in the "
                "repository, one sentence."
            ),
        ),
    )
}
if tuple(KINDS) != VIEW_KINDS:
    raise AssertionError("every view kind of kbc.domain.views needs a definition here, in the same order")


def view_schema(kind: ViewKind) -> Schema:
    """The JSON Schema of a whole stored view of ``kind``."""
    definition = KINDS[kind]
    return _object(
        {
            "id": _TEXT,
            "kind": {"const": kind},
            "title": _TEXT,
            "facts": definition.facts,
            "interpretation": definition.interpretation,
            "provenance": _object(
                {
                    "source": {"enum": ["llm", "docstring", "none"]},
                    "model": _TEXT,
                    "prompt_version": _TEXT,
                    "facts_hash": _TEXT,
                }
            ),
            "grounding": _object({"checked": _COUNT, "removed": _COUNT, "ungrounded": _TEXTS}),
        }
    )
