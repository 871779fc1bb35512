"""Features of a library its users import module by module (:func:`library_modules`): one per
module group that holds public modules, as a user would name it.

A feature is named by the title of the docs page that documents its module (``.. automodule::``
under "Cache utilities"), else by its group; its key symbols are the public classes and
functions of its modules that are used, most used first, never a copy of another module's
definition or a function only a demo block runs (:mod:`kbc.views.library`); its entry points
are the public-API flows (and any command) that run code in it. Its prose, without an LLM,
is the group's own docstring.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kbc.domain.models import EntryPoint
from kbc.views.context import MAX_LIST, Context, library_modules
from kbc.views.library import key_symbols, usage
from kbc.views.structure import entry_point_data, group_doc

FEATURE_SYMBOLS = 15
TITLE_NAMES = 3


@dataclass(frozen=True, slots=True)
class LibraryFeature:
    group: str
    title: str
    facts: dict[str, Any]
    doc: str


def library_features(context: Context, entries: dict[str, list[EntryPoint]]) -> list[LibraryFeature]:
    """One feature per module group of the library's public modules that has key symbols;
    ``entries``: the entry points (public-API flows included) by the group of the code they run."""
    public = set(library_modules(context))
    if not public:
        return []
    use = usage(context)
    found = []
    for name, group in sorted(context.groups.items()):
        modules = sorted(m for m in group.modules if m in public)
        if not modules:
            continue
        symbols = key_symbols(context, use, set(modules), FEATURE_SYMBOLS)
        if not symbols:
            continue
        titled = [context.docs.titles[m] for m in modules if m in context.docs.titles]
        label = titled[0] if titled else name
        shown = ", ".join(context.symbols[q][0].name for q in symbols[:TITLE_NAMES])
        facts = {
            "name": label,
            "entry_points": [entry_point_data(context, e) for e in entries.get(name, [])[:MAX_LIST]],
            "modules": [name],
            "symbols": [{"qname": q, "location": context.symbol_location(q)} for q in symbols],
        }
        title = f"Feature: {label} ({shown})" if label == name else f"Feature: {label} ({name}: {shown})"
        found.append(LibraryFeature(name, title, facts, group_doc(context, name, context.group_files(name))))
    return found
