"""The interpretive fields: empty, from the code's own docstrings and messages, or the LLM prompt.

``PROMPT_VERSION`` is part of the interpretation cache key: change it whenever the
prompts or the schemas of the interpretation change.
"""

from __future__ import annotations

import json
from typing import Any

from kbc.domain.views import ViewKind
from kbc.views.kinds import KINDS

PROMPT_VERSION = "1"
PROMPT_FACTS_CHARS = 24_000  # the facts sent with one prompt (lists are shortened to fit)
MAX_DOC_ITEMS = 8

SYSTEM = (
    "You write the interpretive part of one view in a knowledge base about a code repository, "
    "for engineers and coding agents. The facts you are given were extracted from the code and "
    "are true; you only interpret them. Name code only with identifiers and paths that appear in "
    "the facts, written in backticks. Never invent functions, classes, files, settings or "
    "behaviour; when the facts do not show something, leave it out. Be concise and concrete. "
    "Reply with one JSON object and nothing else, matching this JSON Schema:\n"
)


def empty(kind: ViewKind) -> dict[str, Any]:
    """The interpretation with every field present and empty."""
    properties = KINDS[kind].interpretation["properties"]
    return {name: ([] if spec["type"] == "array" else "") for name, spec in sorted(properties.items())}


def _first_docs(items: list[dict[str, Any]], key: str, text: str, prose: str) -> list[dict[str, Any]]:
    return [{key: item[key], prose: item[text]} for item in items if item.get(text)]


def from_docstrings(kind: ViewKind, facts: dict[str, Any], docs: tuple[str, ...] = ()) -> dict[str, Any]:
    """Interpretive fields filled from the code's own words (docstrings, messages), never invented.

    ``docs``: the docstrings of what the view is about that its facts do not carry (the top
    package's for the architecture, the entry points' code for a feature).
    """
    out = empty(kind)
    if kind == "architecture":
        out["overview"] = docs[0] if docs else ""
    elif kind == "module":
        out["purpose"] = facts.get("doc", "")
        out["responsibilities"] = [f"`{s['qname']}`: {s['doc']}" for s in facts["symbols"] if s.get("doc")][
            :MAX_DOC_ITEMS
        ]
    elif kind == "feature":
        out["summary"] = " ".join(docs[:3])
    elif kind == "workflow":
        steps = facts["steps"]
        out["summary"] = steps[0].get("doc", "") if steps else ""
        out["steps"] = _first_docs(steps, "n", "doc", "explanation")
    elif kind == "domain_concepts":
        out["concepts"] = _first_docs(facts["concepts"], "name", "doc", "meaning")
    elif kind == "business_rules":
        out["rules"] = _first_docs(facts["rules"], "n", "message", "rule")
    return out


def is_empty(interpretation: dict[str, Any]) -> bool:
    return not any(interpretation.values())


def _collect_lists(value: Any, into: list[tuple[int, list[Any]]]) -> None:
    if isinstance(value, list):
        into.append((len(json.dumps(value)), value))
        for item in value:
            _collect_lists(item, into)
    elif isinstance(value, dict):
        for item in value.values():
            _collect_lists(item, into)


def _shrink(facts: dict[str, Any], limit: int) -> dict[str, Any]:
    """A copy of the facts whose JSON fits ``limit`` characters: the longest lists are halved."""
    data: dict[str, Any] = json.loads(json.dumps(facts))
    while len(json.dumps(data)) > limit:
        lists: list[tuple[int, list[Any]]] = []
        _collect_lists(data, lists)
        lists = [entry for entry in lists if len(entry[1]) > 1]
        if not lists:
            break
        _, longest = max(lists, key=lambda entry: entry[0])
        del longest[max(1, len(longest) // 2) :]
    return data


def messages(kind: ViewKind, title: str, facts: dict[str, Any]) -> list[dict[str, str]]:
    schema = json.dumps(KINDS[kind].interpretation, sort_keys=True)
    shown = json.dumps(_shrink(facts, PROMPT_FACTS_CHARS), sort_keys=True, indent=1)
    return [
        {"role": "system", "content": SYSTEM + schema},
        {
            "role": "user",
            "content": f"View kind: {kind}\nWhat to write: {KINDS[kind].guidance}\n"
            f"Title: {title}\nFacts (JSON):\n{shown}",
        },
    ]


def repair_messages(original: list[dict[str, str]], reply: str, problems: list[str]) -> list[dict[str, str]]:
    listed = "\n".join(f"- {p}" for p in problems[:10])
    return [
        *original,
        {"role": "assistant", "content": reply},
        {
            "role": "user",
            "content": "That reply is not valid:\n"
            + listed
            + "\nReply again with only the corrected JSON object.",
        },
    ]


def parse_reply(kind: ViewKind, reply: str) -> tuple[dict[str, Any] | None, list[str]]:
    """The interpretation in an LLM reply, or None and what is wrong with it."""
    from kbc.views.schema import schema_errors

    text = reply.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, [f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"]
    if isinstance(data, dict):
        for name, value in empty(kind).items():
            data.setdefault(name, value)  # a field left out is an empty field
    problems = schema_errors(KINDS[kind].interpretation, data)
    if problems:
        return None, problems
    return data, []
