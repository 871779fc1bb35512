"""The quality figures of one package's views (``benchmarks/views_corpus.py``): view counts by
kind, components, workflows by where they start, entry points and examples, citations that do
not resolve, empty interpretation fields, where the prose came from, business rules."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

# The interpretation's fields of each view kind (kbc/views/kinds.py; the templates print
# "_No overview._", "None stated." and the like for an empty one). A field a view carries
# beyond these is counted too.
PROSE_FIELDS: dict[str, tuple[str, ...]] = {
    "architecture": ("overview", "design_decisions"),
    "module": ("purpose", "responsibilities", "collaborators"),
    "feature": ("summary",),
    "workflow": ("summary", "steps"),
    "entry_points": ("summary",),
    "domain_concepts": ("concepts",),
    "business_rules": ("rules",),
    "integrations": ("integrations",),
}
# Keyed prose: (interpretation field, facts list) whose items it explains.
KEYED = {
    "workflow": ("steps", "steps"),
    "domain_concepts": ("concepts", "concepts"),
    "business_rules": ("rules", "rules"),
    "integrations": ("integrations", "integrations"),
}
LOCATION = re.compile(r"^(?P<path>[^\s:][^:]*):(?P<start>\d+)(?:-(?P<end>\d+))?$")  # the schema's form
# Facts that hold the code's own text (docstrings, messages, expressions), never a location.
TEXT_KEYS = frozenset(
    {"doc", "message", "condition", "outcome", "signature", "annotation", "default", "detail", "limits"}
)
SAMPLES = 10  # unresolved citations kept per package, as examples


class Lines:
    """Line counts of the repository's tracked files, read when first cited."""

    def __init__(self, tree: Path, tracked: set[str]) -> None:
        self.tree = tree
        self.tracked = tracked  # the paths git tracks
        self.counts: dict[str, int] = {}

    def count(self, path: str) -> int | None:
        """Lines in ``path`` (as Python counts them: ``\\n``, ``\\r\\n`` or ``\\r`` ends one), or
        None when git does not track it."""
        if path not in self.tracked:
            return None
        if path not in self.counts:
            try:
                data = (self.tree / path).read_bytes()
            except OSError:
                return None
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            self.counts[path] = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        return self.counts[path]


def locations(value: Any, key: str = "") -> list[tuple[str, str]]:
    """Every (key, ``path:start[-end]`` string) in ``value``, at any depth, but in the facts
    that quote the code's text."""
    if key in TEXT_KEYS:
        return []
    if isinstance(value, dict):
        return [found for k, item in value.items() for found in locations(item, k)]
    if isinstance(value, list):
        return [found for item in value for found in locations(item, key)]
    if isinstance(value, str) and LOCATION.match(value):
        return [(key, value)]
    return []


def unresolved(cited: str, lines: Lines) -> str:
    """Why a location does not resolve ("" when it does)."""
    match = LOCATION.match(cited)
    assert match is not None
    start = int(match["start"])
    end = int(match["end"]) if match["end"] else start
    count = lines.count(match["path"])
    if count is None:
        return "no such file"
    if start < 1 or end < start:
        return "bad range"
    if end > count:
        return f"past the end ({count} lines)"
    return ""


def is_empty(value: Any) -> bool:
    return (
        value is None
        or (isinstance(value, str) and not value.strip())
        or (isinstance(value, list | dict) and not value)
    )


def figures(views: list[dict[str, Any]], lines: Lines) -> dict[str, Any]:
    """The package's figures, from its view documents."""
    by_kind: Counter[str] = Counter(v.get("kind", "?") for v in views)
    architecture = next((v.get("facts", {}) for v in views if v.get("kind") == "architecture"), None)
    listed = next((v.get("facts", {}) for v in views if v.get("kind") == "entry_points"), None)
    entry_kinds = Counter(e.get("kind", "?") for e in (listed or {}).get("entry_points", []))
    example_kinds = Counter(e.get("kind", "?") for e in (listed or {}).get("examples", []))
    starts = Counter(
        v.get("facts", {}).get("entry_point", {}).get("kind", "?")
        for v in views
        if v.get("kind") == "workflow"
    )
    sources = Counter(v.get("provenance", {}).get("source", "?") for v in views)

    cited = 0
    unresolved_by_reason: Counter[str] = Counter()
    unresolved_by_key: Counter[str] = Counter()
    samples: list[dict[str, str]] = []
    empty_fields: Counter[str] = Counter()
    fields = 0
    empty_views = 0
    explained: dict[str, list[int]] = {}  # kind -> [items with prose, items in the facts]
    for view in views:
        kind = view.get("kind", "?")
        for key, location in locations(view.get("facts", {})):
            cited += 1
            reason = unresolved(location, lines)
            if reason:
                unresolved_by_reason[reason.split(" (")[0]] += 1
                unresolved_by_key[key] += 1
                if len(samples) < SAMPLES:
                    samples.append(
                        {"view": view.get("id", "?"), "key": key, "location": location, "reason": reason}
                    )
        interpretation = view.get("interpretation") or {}
        names = dict.fromkeys((*PROSE_FIELDS.get(kind, ()), *interpretation))
        fields += len(names)
        empty_here = [name for name in names if is_empty(interpretation.get(name))]
        empty_fields.update(f"{kind}.{name}" for name in empty_here)
        empty_views += bool(names) and len(empty_here) == len(names)
        if kind in KEYED:
            prose, facts = KEYED[kind]
            said = [
                item
                for item in interpretation.get(prose) or []
                if isinstance(item, dict)
                and any(not is_empty(v) for k, v in item.items() if k not in ("n", "name"))
            ]
            total = explained.setdefault(kind, [0, 0])
            total[0] += len(said)
            total[1] += len(view.get("facts", {}).get(facts) or [])
    rules = sum(
        len(v.get("facts", {}).get("rules", [])) + int(v.get("facts", {}).get("omitted", 0))
        for v in views
        if v.get("kind") == "business_rules"
    )
    return {
        "business_rules": rules,
        "views": len(views),
        "views_by_kind": dict(sorted(by_kind.items())),
        "python_files": (architecture or {}).get("python_files"),
        "files": (architecture or {}).get("files"),
        "components": by_kind.get("module", 0),
        "module_groups": len((architecture or {}).get("modules", [])),
        "dependencies": len((architecture or {}).get("dependencies", [])),
        "layers": len((architecture or {}).get("layers", [])),
        "workflows": sum(starts.values()),
        "workflows_public_api": starts.get("public_api", 0),
        "workflows_other": sum(n for k, n in starts.items() if k != "public_api"),
        "workflow_starts": dict(starts.most_common()),
        "entry_points": sum(entry_kinds.values()),
        "entry_points_main_guard": entry_kinds.get("main_guard", 0),
        "entry_point_kinds": dict(entry_kinds.most_common()),
        "examples": sum(example_kinds.values()),
        "example_kinds": dict(example_kinds.most_common()),
        "citations": cited,
        "unresolved_citations": sum(unresolved_by_reason.values()),
        "unresolved_by_reason": dict(unresolved_by_reason.most_common()),
        "unresolved_by_key": dict(unresolved_by_key.most_common()),
        "unresolved_samples": samples,
        "interpretation_fields": fields,
        "empty_fields": sum(empty_fields.values()),
        "empty_by_field": dict(sorted(empty_fields.items())),
        "views_without_prose": empty_views,
        "explained": explained,
        "prose": {source: sources.get(source, 0) for source in ("llm", "docstring", "none")}
        | {k: n for k, n in sources.items() if k not in ("llm", "docstring", "none")},
        "has_architecture": architecture is not None,
        "has_entry_points_view": listed is not None,
    }
