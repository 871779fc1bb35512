"""Every setting declared once: its table and key in kbc.toml, its type, its environment
variable, its lower bound and its help, and whether a repository's own configuration may set
it (:mod:`kbc.domain.settings` reads them; the defaults are :class:`Settings`' own). A build's
settings are declared in :mod:`kbc.domain.fields_build`, those of answering requests in
:mod:`kbc.domain.fields_serve`."""

from __future__ import annotations

from kbc.domain.fields_build import BUILD_FIELDS
from kbc.domain.fields_serve import SERVE_FIELDS
from kbc.domain.fieldspec import FieldSpec

FIELDS: tuple[FieldSpec, ...] = BUILD_FIELDS + SERVE_FIELDS

__all__ = ["FIELDS", "FieldSpec"]
