"""Views: typed documents whose facts come from the code and whose prose alone is interpreted.

A view's ``facts`` and ``interpretation`` are plain JSON data, checked against
the JSON Schema of its kind (``kbc.views.kinds``, where every kind is defined). ``provenance`` says where
the prose came from; ``grounding`` what the check against the facts removed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

ViewKind = Literal[
    "architecture",
    "module",
    "feature",
    "workflow",
    "entry_points",
    "domain_concepts",
    "business_rules",
    "integrations",
]
VIEW_KINDS: tuple[ViewKind, ...] = get_args(ViewKind)  # in the order views are built and shown
ProseSource = Literal["llm", "docstring", "none"]
VIEW_PREFIX = "@views/"  # where view documents sit in the index: never a path in the repository


def view_kind_of(path: str) -> str:
    """The kind of the view document at ``path`` (``@views/workflow/x.md``, ``@views/architecture.md``)."""
    rest = path.removeprefix(VIEW_PREFIX)
    return rest.split("/", 1)[0] if "/" in rest else rest.removesuffix(".md")


@dataclass(frozen=True, slots=True)
class Provenance:
    source: ProseSource
    model: str = ""  # the LLM that wrote the prose ("" unless source is "llm")
    prompt_version: str = ""
    facts_hash: str = ""  # sha256 of the view's facts: the interpretation cache key with the two above


@dataclass(frozen=True, slots=True)
class Grounding:
    """The prose's references to code, checked against the facts."""

    checked: int = 0  # references found in the prose
    removed: int = 0  # sentences or items dropped because they named something the facts do not hold
    ungrounded: tuple[str, ...] = ()  # the names that were not found


@dataclass(frozen=True, slots=True)
class View:
    id: str  # "architecture", "module:pkg.sub", "workflow:console_script:kbc", ...
    kind: ViewKind
    title: str
    facts: dict[str, Any]
    interpretation: dict[str, Any]
    provenance: Provenance
    grounding: Grounding = field(default_factory=Grounding)
