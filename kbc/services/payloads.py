"""The JSON data of each answer, one shape for every way in: the CLI's ``--format json``, the
MCP tools and the REST API all serialise these, so a pipeline may switch between them."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable
from dataclasses import asdict
from typing import Any

from kbc.domain.codec import to_data
from kbc.domain.drift import DriftReport
from kbc.domain.errors import KbcError
from kbc.domain.views import View
from kbc.retrieval.answer import Answer
from kbc.retrieval.profiles import Profile
from kbc.retrieval.results import Slice
from kbc.services.reads import FileLines, ScopeSummary, SearchHit
from kbc.services.status import Status
from kbc.services.symbols import SymbolReport
from kbc.store.gaps import Gap


def slice_data(found: Slice, query_id: str | None = None) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(found.to_json())
    return data if query_id is None else {**data, "query_id": query_id}


def answer_data(answer: Answer, query_id: str) -> dict[str, Any]:
    return {**answer.as_data(), "query_id": query_id}


def symbols_data(reports: Iterable[SymbolReport]) -> list[dict[str, Any]]:
    return [dict(to_data(r), location=r.location) for r in reports]


def views_data(views: Iterable[View]) -> list[dict[str, Any]]:
    return [to_data(v) for v in views]


def view_list_data(views: Iterable[View]) -> list[dict[str, Any]]:
    """One line per view: id, kind, title and where its prose came from."""
    return [{"id": v.id, "kind": v.kind, "title": v.title, "source": v.provenance.source} for v in views]


def drift_data(reports: Iterable[DriftReport]) -> list[dict[str, Any]]:
    return [to_data(r) for r in reports]


def status_data(status: Status) -> dict[str, Any]:
    return asdict(status)


def gaps_data(gaps: Iterable[Gap]) -> list[dict[str, Any]]:
    return [asdict(g) for g in gaps]


def use_cases_data(profiles: Iterable[Profile]) -> list[dict[str, Any]]:
    return [{"name": p.name, "description": p.description, "budget": p.budget} for p in profiles]


KEPT_WHOLE = ("id", "kind", "title")  # what names an answer is never cut


def fitted(data: dict[str, Any], budget: int, count: Callable[[str], int]) -> dict[str, Any]:
    """``data`` whose JSON fits ``budget`` tokens: its longest lists halved, then its longest
    texts, until it fits; ``truncated`` names what was cut (absent when nothing was)."""
    if budget < 1:
        raise KbcError(f"budget {budget} is too small", hint="give a budget of 1 token or more")

    def size(value: Any) -> int:
        return count(json.dumps(value, ensure_ascii=False))

    if size(data) <= budget:
        return data
    trimmed: dict[str, Any] = copy.deepcopy(data)
    cut: set[str] = set()
    while size(trimmed) > budget:
        where = _largest(trimmed, "")
        if where is None:
            raise KbcError(
                f"budget {budget} is too small for this answer: cut to its bones it takes "
                f"{size(trimmed)} tokens",
                hint=f"give a budget of {size(trimmed)} tokens or more",
            )
        path, parent, key, value = where
        if isinstance(value, list):
            parent[key] = value[: len(value) // 2]
        else:
            parent[key] = value[: len(value) // 2] + "…"
        cut.add(path)
        trimmed["truncated"] = sorted(cut)
    return trimmed


def _largest(node: Any, path: str) -> tuple[str, Any, Any, Any] | None:
    """The longest non-empty list (or, with none, string) under ``node``: its dotted path, its
    container, its key there and itself."""
    best: tuple[int, int, str, Any, Any, Any] | None = None  # (is list, length, path, parent, key, value)
    stack: list[tuple[Any, str]] = [(node, path)]
    while stack:
        current, where = stack.pop()
        items = (
            current.items()
            if isinstance(current, dict)
            else enumerate(current)
            if isinstance(current, list)
            else ()
        )
        for key, value in items:
            if key == "truncated" or (not where and key in KEPT_WHOLE) or where == "provenance":
                continue
            named = f"{where}.{key}" if where else str(key)
            if (isinstance(value, list) and len(value) > 1) or (isinstance(value, str) and len(value) > 16):
                length = len(json.dumps(value, ensure_ascii=False))
                rank = (1 if isinstance(value, list) else 0, length)
                if best is None or rank > best[:2]:
                    best = (*rank, named, current, key, value)
            if isinstance(value, (dict, list)):
                stack.append((value, named))
    return None if best is None else best[2:]


def hits_data(hits: Iterable[SearchHit]) -> list[dict[str, Any]]:
    """A search's hits; each names its repository in a search across several."""
    out = []
    for hit in hits:
        data: dict[str, Any] = {
            "id": hit.id,
            "path": hit.path,
            "start_line": hit.start_line,
            "end_line": hit.end_line,
            "kind": hit.kind,
            "score": round(hit.score, 8),
            "heading": hit.heading,
            "symbols": list(hit.symbols),
            "text": hit.text,
        }
        if hit.repository:
            data["repository"] = hit.repository
        out.append(data)
    return out


def scopes_data(scopes: Iterable[ScopeSummary]) -> list[dict[str, Any]]:
    return [
        {"scope": s.scope, "documents": s.documents, "roots": list(s.roots), "default": s.default}
        for s in scopes
    ]


def file_data(found: FileLines) -> dict[str, Any]:
    """A file's lines as get_file returns them (``truncated`` only when a budget was given)."""
    data: dict[str, Any] = {
        "path": found.path,
        "start_line": found.start_line,
        "end_line": found.end_line,
        "lines": found.lines,
        "text": found.text,
    }
    return data if found.truncated is None else {**data, "truncated": found.truncated}
