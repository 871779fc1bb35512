"""The JSON data of each answer, one shape for every way in: the CLI's ``--format json``, the
MCP tools and the REST API all serialise these, so a pipeline may switch between them."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

from kbc.domain.codec import to_data
from kbc.domain.drift import DriftReport
from kbc.domain.views import View
from kbc.retrieval.answer import Answer
from kbc.retrieval.profiles import Profile
from kbc.retrieval.results import Slice
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
