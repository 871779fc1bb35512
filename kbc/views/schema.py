"""Checking a document against a JSON Schema (the schemas of the view kinds are in
:mod:`kbc.views.kinds`)."""

from __future__ import annotations

from typing import Any


def schema_errors(schema: dict[str, Any], document: Any) -> list[str]:
    """Every way ``document`` breaks ``schema``, each with the JSON path where it happens."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}" for e in errors]
