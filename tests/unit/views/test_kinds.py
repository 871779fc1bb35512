"""Every view kind is defined once, and everything about a kind derives from its definition."""

from __future__ import annotations

from pathlib import Path

import click

from kbc.domain.views import VIEW_KINDS
from kbc.views.build import Draft, ViewsSummary, _checked
from kbc.views.kinds import KINDS, view_schema
from kbc.views.prose import empty, messages

TEMPLATES = Path(__file__).resolve().parents[3] / "kbc" / "views" / "templates"


def test_each_kind_has_one_definition_and_what_it_names_exists() -> None:
    assert tuple(KINDS) == VIEW_KINDS
    for kind, definition in KINDS.items():
        assert definition.kind == kind and definition.heading and definition.guidance
        assert (TEMPLATES / definition.template).is_file()
        assert tuple(sorted(empty(kind))) == definition.prose_fields
        assert view_schema(kind)["properties"]["facts"] is definition.facts
        prompt = messages(kind, "t", {})[-1]["content"]
        assert f"View kind: {kind}\nWhat to write: {definition.guidance}" in prompt


def test_the_cli_offers_the_defined_kinds() -> None:
    from kbc.cli.maintain import views

    (kind,) = [p for p in views.params if p.name == "kind"]
    assert isinstance(kind.type, click.Choice) and tuple(kind.type.choices) == VIEW_KINDS


def test_a_view_whose_facts_break_its_schema_is_left_out_and_named() -> None:
    good = Draft("entry_points", "entry_points", "Entry points", {"entry_points": []})
    bad = Draft(
        "feature:x",
        "feature",
        "Feature x",
        {"name": "x", "entry_points": [], "modules": "pkg", "symbols": []},
    )
    summary = ViewsSummary()
    assert _checked([good, bad], summary) == [good]
    (error,) = summary.errors
    assert error.startswith("feature:x: left out, its facts break the feature schema (")
    assert "modules: 'pkg' is not of type 'array'" in error and "kbc bug" in error
