"""What a knowledge base's store holds, read for its adapters: the views, the symbols, the
documents behind the code, the knowledge scopes, and the lines of the files it may serve
(confined to the repository's tracked files and the knowledge documents, redacted)."""

from __future__ import annotations

from pathlib import Path

from kbc.analyzers.secret_places import secret_by_nature
from kbc.domain.drift import DriftReport
from kbc.domain.errors import NotFound
from kbc.domain.settings import Settings
from kbc.domain.views import View
from kbc.services.components import Components
from kbc.services.drift import find_drift
from kbc.services.following import ServedBuild
from kbc.services.reads import FileLines, ScopeSummary
from kbc.services.serving import read_lines, within_budget
from kbc.services.symbols import SymbolReport, find_symbols
from kbc.services.team import Manifest, scope_summaries
from kbc.services.views import read_views
from kbc.store.facts_store import FactsStore


class Reading:
    """The read models of the repository at ``root`` over its ``store``, read from the build
    ``served`` follows."""

    def __init__(
        self, root: Path, store: Path, settings: Settings, components: Components, served: ServedBuild
    ) -> None:
        self._root = root
        self._store = store
        self._settings = settings
        self._components = components
        self._served = served

    def views(self, kind: str | None = None) -> list[View]:
        return [v for v in read_views(self._store) if kind is None or v.kind == kind]

    def view(self, view_id: str) -> View:
        for found in read_views(self._store):
            if found.id == view_id:
                return found
        raise NotFound(f"no view {view_id!r}", hint="list_views / `kbc views` lists them")

    def render(self, out: Path) -> list[Path]:
        """Every view as Markdown in ``out``, with an index page; the pages written."""
        from kbc.services.views import render_folder

        return render_folder(self._store, self._root, out)

    def symbol(self, name: str) -> list[SymbolReport]:
        return find_symbols(FactsStore(self._store), name)

    def drift(self) -> list[DriftReport]:
        """The documents that are behind the code."""
        return find_drift(self._root, self._store)

    def manifest(self) -> Manifest:
        """What the last build read of the knowledge roots (empty without any)."""
        return self._served.manifest()

    def scopes(self) -> list[ScopeSummary]:
        """Every knowledge scope: its name, documents, roots, and whether a request that names
        no scope reads it."""
        return scope_summaries(self._served.manifest(), self._settings.default_scopes)

    def file(
        self, path: str, start: int | None = None, end: int | None = None, budget: int | None = None
    ) -> FileLines:
        """Lines of a tracked file or a knowledge document, redacted; anything else (traversal,
        absolute, untracked or ignored paths, files that are secrets by nature) is refused. With
        ``budget``, the lines from ``start`` that fit in that many tokens (``truncated`` says
        whether some were left out)."""
        found = read_lines(
            self._root,
            self._served.manifest(),
            self._served.tracked_files,
            self._served.credential_values,
            path,
            start,
            end,
            self._settings.max_file_bytes,
        )
        if budget is None:
            return found
        return within_budget(found, budget, self._components.token_counter().count)

    def tracked_paths(self) -> frozenset[str]:
        """The tracked text files that may be served (all but those that are secrets by nature)
        and the knowledge documents."""
        files = frozenset(path for path in self._served.tracked_files() if secret_by_nature(path) is None)
        return files | frozenset(self._served.manifest().documents)
