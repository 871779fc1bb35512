"""`kbc build`: every pass that exists, in order: facts, then the index."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kbc.domain.settings import Settings
from kbc.index.build import IndexSummary, Progress, build_index
from kbc.index.embed import Embedder, EmbedderUnavailable, load_embedder, model_name
from kbc.index.vectors import VectorStore, VectorStoreError, open_vector_store
from kbc.services.analyze import AnalyzeSummary, ProgressFactory, analyze_repository
from kbc.store.facts_store import FactsStore


@dataclass(frozen=True, slots=True)
class BuildSummary:
    analyze: AnalyzeSummary
    index: IndexSummary


def index_dir(store_root: Path) -> Path:
    return store_root / "index"


def open_embedding(store_root: Path, repo_root: Path) -> tuple[Embedder | None, VectorStore | None, str]:
    """The embedder and vector store, or (None, None, why not): retrieval then is lexical."""
    name = model_name()
    try:
        embedder = load_embedder(name)
    except EmbedderUnavailable as exc:
        return None, None, exc.message
    try:
        vectors = open_vector_store(index_dir(store_root), str(repo_root.resolve()), embedder,
                                    embedder_name=name)
    except VectorStoreError as exc:
        return None, None, exc.message
    return embedder, vectors, ""


def build_repository(root: Path, settings: Settings, store_dir: Path | None = None,
                     progress: ProgressFactory | None = None,
                     embed_progress: Progress | None = None) -> BuildSummary:
    analyzed = analyze_repository(root, settings, store_dir, progress)
    store_root = Path(analyzed.store)
    store = FactsStore(store_root)
    facts = {f.path: f for f in store.facts()}
    inventory = store.inventory()
    embedder, vectors, note = open_embedding(store_root, root)
    indexed = build_index(
        root.resolve(), inventory.files, facts, index_dir(store_root),
        chunk_lines=settings.chunk_lines, overlap=settings.chunk_overlap,
        workers=settings.worker_count(), embedder=embedder, vectors=vectors, note=note,
        progress=embed_progress,
    )
    return BuildSummary(analyzed, indexed)
