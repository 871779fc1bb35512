"""`kbc build`: every pass in order: facts, views, then the index; then the build is published.

Nothing a reader uses changes until every pass is done: the facts are written as a
generation of their own, the views and the lexical index beside the live ones, vectors
only added. Publishing puts them in place (views, index, facts, knowledge manifest, each
one rename) and writes the build record last; only then are the vectors and files no
longer needed removed. A build says it is under way in ``building.json`` from start to
record, so one stopped in between is known to the next writer (see
:mod:`kbc.services.refresh`), which clears what it left and does its work again.

A first build of a large repository publishes a first index before the facts pass and
leaves the rest to a background process (:mod:`kbc.services.first`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kbc import __version__
from kbc.analyzers.gitrepo import uncommitted
from kbc.analyzers.sweep import Sweep
from kbc.domain.errors import in_pass
from kbc.domain.models import FileFacts, Inventory
from kbc.domain.progress import Reporter
from kbc.domain.settings import Settings
from kbc.domain.timing import PassTiming, Stopwatch
from kbc.index.build import IndexSummary, build_index, discard_staged, publish_index, sweep_index
from kbc.services.analyze import AnalyzeSummary, analyze_with_sweep, discover_and_sweep
from kbc.services.components import CONFIGURED, Components
from kbc.services.embedding import start_filling
from kbc.services.first import FACTS, first_wanted, publish_first
from kbc.services.team import Collected, Manifest, collect, roots_to_read, write_manifest
from kbc.services.views import build_views_pass, view_documents
from kbc.store.facts_store import FactsStore, forget_facts
from kbc.store.layout import chunk_cache, index_dir, store_path
from kbc.store.lock import writer_lock
from kbc.store.state import BuildState, begin_build, end_build, unfinished_build, write_state
from kbc.store.views_store import ViewsStore
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
    filling: int = 0  # pid of the process started to embed the units left (0: none left; -1: failed)
    later: str = ""  # a first index's: the passes left to that process (kbc.services.first)


def build_repository(  # noqa: PLR0913 - the build's inputs, passed by name
    root: Path,
    settings: Settings,
    store_dir: Path | None = None,
    progress: Reporter | None = None,
    *,
    no_llm: bool = False,
    interpreter: Interpreter | None = None,
    fresh: bool = False,
    on_wait: Callable[[str], None] | None = None,
    components: Components = CONFIGURED,
    wait: bool | None = None,
    reparse: bool | None = None,
    start: bool = True,
) -> BuildSummary:
    """Every pass, holding the store's writer lock; ``fresh`` goes through every file again
    (dated again, its facts and chunks compared with what they were), ``reparse`` (default:
    ``fresh``) re-does the work the caches would skip (parsing, chunking): False takes each
    file's facts from the analysis cache and its chunks from the chunk cache, keyed by its
    content and what reads it, so a fresh build of a commit much of whose content was seen
    before costs what changed; ``interpreter`` overrides the components' one. The build
    state is written last. With more units to embed than ``settings.wait_units`` (``wait``
    True: never; False: any), the index is published lexical and a background process
    embeds them (:mod:`kbc.services.embedding`). Unless ``wait`` is True, a first build of a
    large repository publishes a first index and leaves the facts, views and vectors to that
    process (:mod:`kbc.services.first`). ``start``: False when the caller is that process
    (it fills in the vectors itself). ``progress`` hears every pass start, advance and end,
    and the summary of each stage (analyze, views, knowledge, index) as it ends."""
    store_root = store_path(root, settings, store_dir)
    progress = progress or Reporter()
    with writer_lock(store_root, settings.lock_timeout, on_wait) as waited:
        unfinished = unfinished_build(store_root)
        if unfinished is not None:  # a build was stopped before it finished: clear what it left
            ViewsStore(store_root).discard()
            discard_staged(index_dir(store_root))
        first = wait is not True and start and interpreter is None and first_wanted(store_root, settings)
        begin_build(store_root, "fresh" if fresh else "incremental")
        # Read before the files are: a change made while they are read is seen by the next refresh.
        dirty = uncommitted(root, store_path(root, settings, store_dir))
        clock = Stopwatch(progress)
        discovered = discover_and_sweep(root.resolve(), settings, store_root, clock)
        indexed = (
            publish_first(root, settings, store_root, *discovered, progress, no_llm=no_llm) if first else None
        )
        if indexed is not None:
            end_build(store_root)
            summary = _first_summary(root, store_root, discovered[0], indexed, clock)
        else:
            wait_units = None if wait else 0 if wait is False else settings.wait_units
            summary = _build(
                root,
                settings,
                store_dir,
                progress,
                no_llm,
                interpreter or components.llm(settings, no_llm),
                fresh,
                components,
                wait_units,
                fresh if reparse is None else reparse,
                dirty,
                discovered,
            )
            summary = dataclasses.replace(summary, passes=(*clock.passes, *summary.passes))
    filling = (
        start_filling(root, settings, store_dir) if start and (summary.index.pending or summary.later) else 0
    )
    return dataclasses.replace(summary, waited=waited, filling=filling)


def _first_summary(
    root: Path, store_root: Path, inventory: Inventory, indexed: IndexSummary, clock: Stopwatch
) -> BuildSummary:
    """What a build that published a first index did: no facts, no views yet."""
    python = sum(1 for f in inventory.files if f.language == "python")
    analyzed = AnalyzeSummary(
        root=str(root.resolve()),
        store=str(store_root),
        files=len(inventory.files),
        python_files=python,
        parsed=0,
        cached=0,
        failed=0,
        skipped=len(inventory.skipped),
        ignored=inventory.ignored,
        symbols=0,
        import_edges=0,
        call_edges=0,
        entry_points=0,
        integrations=0,
        seconds=sum(p.seconds for p in clock.passes),
        passes=tuple(clock.passes),
    )
    return BuildSummary(
        analyzed, ViewsSummary(), indexed, passes=(*clock.passes, *indexed.passes), later=FACTS
    )


def _build(  # noqa: PLR0913 - the build's inputs, passed by name
    root: Path,
    settings: Settings,
    store_dir: Path | None,
    progress: Reporter,
    no_llm: bool,
    interpreter: Interpreter | None,
    fresh: bool,
    components: Components,
    wait_units: int | None,
    reparse: bool,
    dirty: str,
    discovered: tuple[Inventory, Sweep],
) -> BuildSummary:
    analyzed, swept = analyze_with_sweep(
        root, settings, store_dir, progress, fresh=reparse, publish=False, discovered=discovered
    )
    progress.summary("analyze", analyzed)
    store_root = Path(analyzed.store)
    generation = analyzed.generation
    clock = Stopwatch(progress)
    with in_pass("views"), clock.measure("views") as interpreting:
        views, viewed = build_views_pass(
            store_root,
            root,
            settings,
            no_llm=no_llm,
            interpreter=interpreter,
            progress=lambda n: interpreting.expect(n, "views"),
            generation=generation,
        )
    progress.summary("views", viewed)
    store = FactsStore(store_root, generation)
    inventory = store.inventory()
    collected = Collected((), Manifest())
    roots = roots_to_read(settings, store_root)
    if roots:
        with in_pass("knowledge"), clock.measure("knowledge"):
            collected = collect(root.resolve(), settings, roots, also=swept.values)
    manifest = collected.manifest
    known = KnowledgeSummary(
        len(manifest.roots), len(manifest.documents), len(manifest.scopes()), manifest.problems
    )
    if roots:
        progress.summary("knowledge", known)
    with clock.measure("load embedder"):
        embedder, vectors, note = components.open_embedding(store_root, root, settings, recover=True)
    with in_pass("index"):
        indexed = build_index(
            root.resolve(),
            inventory.files,
            _facts_once(store),  # held by the index pass alone, let go once chunked
            index_dir(store_root),
            chunk_lines=settings.chunk_lines,
            overlap=settings.chunk_overlap,
            workers=settings.worker_count(),
            embedder=embedder,
            vectors=vectors,
            note=note,
            progress=progress,
            documents=view_documents(views),
            fresh=reparse,
            whole=fresh,
            chunk_cache=chunk_cache(store_root),
            credentials=swept.values,
            embed_tests=settings.embed_tests,
            repeated=swept.repeated,
            clean=swept.clean,
            knowledge=collected.texts(),
            knowledge_dates=collected.dates(),
            wait_units=wait_units,
        )
    progress.summary("index", indexed)
    published = Stopwatch(progress)
    with in_pass("publish"), published.measure("publish"):
        ViewsStore(store_root).publish()
        publish_index(index_dir(store_root))
        store.publish(generation)
        write_manifest(store_root, collected.manifest)  # even without a root: a root removed is forgotten
        write_state(
            store_root,
            BuildState(
                inventory.commit,
                len(inventory.files),
                settings.shape(),
                __version__,
                generation,
                dirty,
                finished=time.time(),
            ),
        )
        end_build(store_root)
        sweep_index(index_dir(store_root), indexed, vectors if embedder is not None else None)
    return BuildSummary(
        analyzed,
        viewed,
        indexed,
        knowledge=known,
        passes=(*analyzed.passes, *clock.passes, *indexed.passes, *published.passes),
    )


def _facts_once(store: FactsStore) -> dict[str, FileFacts]:
    """Every file's facts by path, no longer kept by the store: whoever holds the mapping
    holds them, and they go when it lets go."""
    found = {f.path: f for f in store.facts()}
    forget_facts()
    return found
