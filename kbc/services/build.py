"""`kbc build`: every pass in order: facts, views, then the index."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kbc import __version__
from kbc.domain.errors import in_pass
from kbc.domain.progress import AnalyzeProgress, EmbedProgress, ViewsProgress
from kbc.domain.settings import Settings
from kbc.domain.timing import PassTiming, Stopwatch
from kbc.index.build import IndexSummary, build_index
from kbc.services.analyze import AnalyzeSummary, analyze_with_sweep
from kbc.services.components import CONFIGURED, Components
from kbc.services.team import Collected, Manifest, collect, roots_to_read, write_manifest
from kbc.services.views import build_views_pass, view_documents
from kbc.store.facts_store import FactsStore
from kbc.store.layout import index_dir, store_path
from kbc.store.lock import writer_lock
from kbc.store.state import BuildState, write_state
from kbc.views.build import ViewsSummary
from kbc.views.llm import Interpreter


@dataclass(frozen=True, slots=True)
class KnowledgeSummary:
    roots: int = 0  # knowledge roots read
    documents: int = 0
    scopes: int = 0
    problems: tuple[str, ...] = ()  # roots or documents that could not be read, and why


@dataclass(frozen=True, slots=True)
class BuildSummary:
    analyze: AnalyzeSummary
    views: ViewsSummary
    index: IndexSummary
    waited: float = 0.0  # seconds spent waiting for another writer of the store
    passes: tuple[PassTiming, ...] = ()  # every pass in order: seconds, peak RSS by its end
    knowledge: KnowledgeSummary = KnowledgeSummary()


def build_repository(root: Path, settings: Settings, store_dir: Path | None = None,
                     progress: AnalyzeProgress | None = None,
                     embed_progress: EmbedProgress | None = None, *, no_llm: bool = False,
                     interpreter: Interpreter | None = None,
                     views_progress: ViewsProgress | None = None, fresh: bool = False,
                     on_wait: Callable[[str], None] | None = None,
                     components: Components = CONFIGURED) -> BuildSummary:
    """Every pass, holding the store's writer lock; ``fresh`` re-does the work its caches
    would skip (parsing, chunking); ``interpreter`` overrides the components' one. The build
    state is written last."""
    with writer_lock(store_path(root, settings, store_dir), settings.lock_timeout, on_wait) as waited:
        summary = _build(root, settings, store_dir, progress, embed_progress, no_llm,
                         interpreter or components.llm(settings, no_llm), views_progress, fresh,
                         components)
    return dataclasses.replace(summary, waited=waited)


def _build(root: Path, settings: Settings, store_dir: Path | None, progress: AnalyzeProgress | None,
           embed_progress: EmbedProgress | None, no_llm: bool, interpreter: Interpreter | None,
           views_progress: ViewsProgress | None, fresh: bool, components: Components) -> BuildSummary:
    analyzed, swept = analyze_with_sweep(root, settings, store_dir, progress, fresh=fresh)
    store_root = Path(analyzed.store)
    clock = Stopwatch()
    with in_pass("views"), clock.measure("views"):
        views, viewed = build_views_pass(store_root, root, settings, no_llm=no_llm,
                                         interpreter=interpreter, progress=views_progress)
    store = FactsStore(store_root)
    facts = {f.path: f for f in store.facts()}
    inventory = store.inventory()
    collected = Collected((), Manifest())
    roots = roots_to_read(settings, store_root)
    if roots:
        with in_pass("knowledge"), clock.measure("knowledge"):
            collected = collect(root.resolve(), settings, roots)
    with in_pass("knowledge"):  # written even without a root: a root removed is forgotten
        write_manifest(store_root, collected.manifest)
    with clock.measure("load embedder"):
        embedder, vectors, note = components.open_embedding(store_root, root, settings, recover=True)
    with in_pass("index"):
        indexed = build_index(
            root.resolve(), inventory.files, facts, index_dir(store_root),
            chunk_lines=settings.chunk_lines, overlap=settings.chunk_overlap,
            workers=settings.worker_count(), embedder=embedder, vectors=vectors, note=note,
            progress=embed_progress, documents=view_documents(views), fresh=fresh,
            embed_tests=settings.embed_tests, repeated=swept.repeated, knowledge=collected.texts(),
        )
    write_state(store_root, BuildState(inventory.commit, len(inventory.files), settings.shape(), __version__))
    manifest = collected.manifest
    known = KnowledgeSummary(len(manifest.roots), len(manifest.documents), len(manifest.scopes()),
                             manifest.problems)
    return BuildSummary(analyzed, viewed, indexed, passes=(*analyzed.passes, *clock.passes, *indexed.passes),
                        knowledge=known)
