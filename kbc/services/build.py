"""`kbc build`: every pass in order: facts, views, then the index."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kbc import __version__
from kbc.domain.errors import EmbedderUnavailable, VectorStoreError, in_pass
from kbc.domain.settings import Settings
from kbc.domain.timing import PassTiming, Stopwatch
from kbc.index.build import IndexSummary, Progress, build_index
from kbc.index.embed import Embedder, load_embedder, model_name
from kbc.index.vectors import LazyVectorStore, VectorStore, forget_local_store, open_vector_store
from kbc.services.analyze import AnalyzeSummary, ProgressFactory, analyze_with_sweep
from kbc.services.views import build_views_pass, view_documents
from kbc.store.facts_store import FactsStore
from kbc.store.layout import chroma_dir, index_dir, store_path
from kbc.store.lock import writer_lock
from kbc.store.state import BuildState, write_state
from kbc.views.build import Progress as ViewsProgress
from kbc.views.build import ViewsSummary
from kbc.views.llm import Interpreter


@dataclass(frozen=True, slots=True)
class BuildSummary:
    analyze: AnalyzeSummary
    views: ViewsSummary
    index: IndexSummary
    waited: float = 0.0  # seconds spent waiting for another writer of the store
    passes: tuple[PassTiming, ...] = ()  # every pass in order: seconds, peak RSS by its end


def open_embedding(store_root: Path, repo_root: Path, settings: Settings | None = None, *,
                   recover: bool = False, lazy: bool = False
                   ) -> tuple[Embedder | None, VectorStore | None, str]:
    """The embedder and vector store ``settings`` name, or (None, None, why not): retrieval
    then is lexical.

    With ``recover`` (a build, which holds the writer lock), a local Chroma store that
    cannot be opened is moved aside, never deleted, and a new one is started: its
    vectors are embedded again, and the note says where the old one went. With
    ``lazy`` (retrieval, which mostly reads the exact-search snapshot), the store is
    opened, and Chroma imported, only when it is first used.
    """
    settings = settings or Settings()
    name = model_name(settings.embed_model)
    url = settings.chroma_url
    try:
        embedder = load_embedder(name, settings.embed_tokens, settings.cache_dir)
    except EmbedderUnavailable as exc:
        return None, None, exc.message
    where = index_dir(store_root)
    if lazy:
        return embedder, LazyVectorStore(lambda: _open_store(where, repo_root, embedder, name, url)), ""
    try:
        return embedder, _open_store(where, repo_root, embedder, name, url, advise=not recover), ""
    except VectorStoreError as exc:
        local = chroma_dir(where)
        if not recover or url or not local.exists():
            return None, None, exc.message
        aside = where / f"chroma.broken-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
        forget_local_store(local)
        local.rename(aside)
        try:
            vectors = _open_store(where, repo_root, embedder, name, url)
        except VectorStoreError as again:
            return None, None, again.message
        return embedder, vectors, (f"{exc.message}; it was moved to {aside} and the vectors are "
                                   "embedded again (delete it once you no longer need it)")


def _open_store(where: Path, repo_root: Path, embedder: Embedder, name: str, url: str,
                advise: bool = True) -> VectorStore:
    """The store; when a local one cannot be opened, ``advise`` adds what fixes it."""
    try:
        return open_vector_store(where, str(repo_root.resolve()), embedder, url=url, embedder_name=name)
    except VectorStoreError as exc:
        if not advise or url or not chroma_dir(where).exists():
            raise
        raise VectorStoreError(f"{exc.message}; `kbc build` moves it aside and embeds again",
                               hint=exc.hint) from exc


def build_repository(root: Path, settings: Settings, store_dir: Path | None = None,
                     progress: ProgressFactory | None = None,
                     embed_progress: Progress | None = None, *, no_llm: bool = False,
                     interpreter: Interpreter | None = None,
                     views_progress: ViewsProgress | None = None, fresh: bool = False,
                     on_wait: Callable[[str], None] | None = None) -> BuildSummary:
    """Every pass, holding the store's writer lock; ``fresh`` re-does the work its caches
    would skip (parsing, chunking). The build state is written last."""
    with writer_lock(store_path(root, settings, store_dir), settings.lock_timeout, on_wait) as waited:
        summary = _build(root, settings, store_dir, progress, embed_progress, no_llm, interpreter,
                         views_progress, fresh)
    return dataclasses.replace(summary, waited=waited)


def _build(root: Path, settings: Settings, store_dir: Path | None, progress: ProgressFactory | None,
           embed_progress: Progress | None, no_llm: bool, interpreter: Interpreter | None,
           views_progress: ViewsProgress | None, fresh: bool) -> BuildSummary:
    analyzed, swept = analyze_with_sweep(root, settings, store_dir, progress, fresh=fresh)
    store_root = Path(analyzed.store)
    clock = Stopwatch()
    with in_pass("views"), clock.measure("views"):
        views, viewed = build_views_pass(store_root, root, settings, no_llm=no_llm,
                                         interpreter=interpreter, progress=views_progress)
    store = FactsStore(store_root)
    facts = {f.path: f for f in store.facts()}
    inventory = store.inventory()
    with clock.measure("load embedder"):
        embedder, vectors, note = open_embedding(store_root, root, settings, recover=True)
    with in_pass("index"):
        indexed = build_index(
            root.resolve(), inventory.files, facts, index_dir(store_root),
            chunk_lines=settings.chunk_lines, overlap=settings.chunk_overlap,
            workers=settings.worker_count(), embedder=embedder, vectors=vectors, note=note,
            progress=embed_progress, documents=view_documents(views), fresh=fresh,
            embed_tests=settings.embed_tests, repeated=swept.repeated,
        )
    write_state(store_root, BuildState(inventory.commit, len(inventory.files), settings.shape(), __version__))
    return BuildSummary(analyzed, viewed, indexed,
                        passes=(*analyzed.passes, *clock.passes, *indexed.passes))
