"""Open a repository's indexes for retrieval."""

from __future__ import annotations

from pathlib import Path

from kbc.domain.errors import KbcError
from kbc.domain.models import FileFacts, GraphFacts
from kbc.domain.settings import Settings
from kbc.index.history import changed_together
from kbc.retrieval import rank
from kbc.retrieval.profiles import Profile, load_profiles
from kbc.retrieval.retrieve import Retriever
from kbc.services.components import CONFIGURED, Components
from kbc.services.embedding import waits_for_facts
from kbc.store.facts_store import FactsStore
from kbc.store.layout import index_dir, lexical_path, store_path

BEHIND_CHARS = 200  # of the reasons a slice's title gives for a document behind the code


def open_retriever(
    root: Path, settings: Settings, store_dir: Path | None = None, components: Components = CONFIGURED
) -> Retriever:
    store_root = store_path(root, settings, store_dir)
    if not lexical_path(store_root).is_file():
        raise KbcError(
            f"no index for {root.resolve()} in {store_root}", hint="run `kbc build` on the repository first"
        )
    store = FactsStore(store_root)
    if not store.current() and waits_for_facts(store_root):  # a first index: no facts yet
        return _opened(root, settings, store_root, components, None, [], [], {}, {})
    module_paths: dict[str, str] = {}
    symbol_paths: dict[str, str] = {}
    every = list(store.facts())
    for facts in every:
        module_paths.setdefault(facts.module, facts.path)
        for symbol in facts.symbols:
            symbol_paths.setdefault(symbol.qname, facts.path)
    scripts = sorted({e.name for e in store.entry_points() if e.kind in ("console_script", "gui_script")})
    return _opened(
        root, settings, store_root, components, store.graph(), every, scripts, module_paths, symbol_paths
    )


def _opened(  # noqa: PLR0913 - what a store holds for retrieval, passed by name
    root: Path,
    settings: Settings,
    store_root: Path,
    components: Components,
    graph: GraphFacts | None,
    every: list[FileFacts],
    scripts: list[str],
    module_paths: dict[str, str],
    symbol_paths: dict[str, str],
) -> Retriever:
    embedder, vectors, note = components.open_embedding(store_root, root, settings, lazy=True)
    cochange = changed_together(root) if rank.COCHANGE_WEIGHT > 0 else None
    return Retriever(
        index_dir(store_root),
        graph,
        module_paths,
        symbol_paths,
        components.token_counter(),
        embedder,
        vectors,
        note,
        every,
        scripts,
        cochange,
    )


def serving_retriever(root: Path, settings: Settings, store: Path, components: Components) -> Retriever:
    """The retriever a long-lived reader answers many requests with: its lexical index kept in
    memory, the documents behind the code marked, team knowledge in the manifest's order, the
    configured confidence floor and reranker."""
    from kbc.retrieval.rerank import Reranking
    from kbc.services.team import knowledge_order, read_manifest
    from kbc.store.layout import rerank_cache
    from kbc.store.rerank_cache import RerankCache

    opened = open_retriever(root, settings, store, components)
    opened.lexical.remember()  # it answers many requests on this build
    opened.mark_behind(_behind(root, store))
    opened.knowledge_order = knowledge_order(read_manifest(store))
    if settings.confidence_floor >= 0:
        opened.confidence_floor = settings.confidence_floor
    reranker = components.rerank(settings)
    if reranker is not None:
        opened.reranking = Reranking(reranker, settings.rerank_candidates, RerankCache(rerank_cache(store)))
    return opened


def _behind(root: Path, store: Path) -> dict[str, str]:
    """The documents (the repository's and team knowledge's) behind the code, and why: what a
    slice's titles say of them (nothing when drift cannot be read)."""
    from kbc.services.drift import find_drift

    try:
        reports = find_drift(root, store)
    except Exception:
        return {}
    return {r.path: "; ".join(reason.detail for reason in r.reasons)[:BEHIND_CHARS] for r in reports}


def profile_named(root: Path, name: str) -> Profile:
    profiles = load_profiles(root)
    if name not in profiles:
        raise KbcError(f"no use case named {name!r}", hint=f"use one of: {', '.join(sorted(profiles))}")
    return profiles[name]
