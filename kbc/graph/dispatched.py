"""The function a dispatched sub-command runs, as the repository defines it.

A sub-command's dispatch (:mod:`kbc.analyzers.python.dispatch`) names the function as its
module sees it: ``commands.install`` read as ``pipx.commands.install``, which the package
``pipx.commands`` binds to ``pipx.commands.install.install``. Once every module is known, each
such target is followed to its definition (the package's own binding first), so the views
and retrieval find the code a command runs; a target that reaches no definition is kept.
"""

from __future__ import annotations

import dataclasses

from kbc.domain.models import FileFacts
from kbc.graph.symbols import SymbolTable

DISPATCHED = "subcommand "  # an entry point's detail: "subcommand chain", "subcommand table", ...


def settle_dispatches(files: list[FileFacts]) -> list[FileFacts]:
    """``files`` with each dispatched sub-command's target followed to its definition."""
    defined = {s.qname for f in files for s in f.symbols}
    if not any(
        e.detail.startswith(DISPATCHED) and e.target not in defined for f in files for e in f.entry_points
    ):
        return files
    table = SymbolTable(files)
    out = []
    for facts in files:
        entries = []
        for entry in facts.entry_points:
            if entry.detail.startswith(DISPATCHED) and entry.target not in defined:
                found = table.resolve_bound(entry.target)
                if found is not None and found in defined:
                    entry = dataclasses.replace(entry, target=found)
            entries.append(entry)
        changed = tuple(entries) != facts.entry_points
        out.append(dataclasses.replace(facts, entry_points=tuple(entries)) if changed else facts)
    return out
