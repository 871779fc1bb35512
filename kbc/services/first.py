"""The first index: what a first `kbc build` publishes before the facts pass.

libcst reads Python about ten times slower than CPython's own parser, and the facts it
gives (calls, imports, entry points, the graph, the views) are not what the first slice
needs. A build of a repository with no index yet and more Python files to read than
``index.first_files`` therefore discovers the files, sweeps them for credentials, cuts
every file (Python at the definitions ``ast`` reads, :mod:`kbc.analyzers.python.outline`,
read as the facts read them; other code in line windows), writes the lexical index and
publishes it, naming the passes still to come (meta ``LATER``). It writes no build record
and no facts.

The process that embeds the vectors a build leaves (:mod:`kbc.services.embedding`, started
the same way) then runs the build as it would have run: the facts, the views, team
knowledge and the index cut again at the facts' definitions (every file: the store it
leaves is the one the build would have left), then the vectors. A failure there loses
nothing: the first index stays, `kbc status` shows the passes stopped, and `kbc refresh`
(or `kbc embed`) does them again.
"""

from __future__ import annotations

from pathlib import Path

from kbc.analyzers.sweep import Sweep
from kbc.domain.errors import in_pass
from kbc.domain.models import Inventory
from kbc.domain.progress import Reporter
from kbc.domain.settings import Settings
from kbc.index.build import IndexSummary, build_index, publish_index
from kbc.services.analyze import python_modules
from kbc.store.layout import LEXICAL, chunk_cache, index_dir
from kbc.store.state import read_state

FACTS = "facts"  # what a first index waits for: the facts pass and every pass after it
NO_LLM = "no-llm"  # ... run without the LLM, as the build that published it was


def first_wanted(store_root: Path, settings: Settings) -> bool:
    """Whether the store has no build yet, so a build may publish a first index (a store
    with an index is brought up to date as it is, the analysis cache reading little)."""
    if settings.knowledge:  # roots may come from flags the background process does not get
        return False
    return read_state(store_root) is None and not (index_dir(store_root) / LEXICAL).is_file()


def publish_first(
    root: Path,
    settings: Settings,
    store_root: Path,
    inventory: Inventory,
    swept: Sweep,
    progress: Reporter,
    *,
    no_llm: bool,
) -> IndexSummary | None:
    """Publish the first index of ``inventory`` (``swept``: what the credential sweep found
    in it), or None when there are no more Python files than ``settings.first_files`` (the
    build reads them whole)."""
    modules = python_modules(inventory.files, settings)
    if len(modules) <= settings.first_files:
        return None
    where = index_dir(store_root)
    with in_pass("index"):
        indexed = build_index(
            root.resolve(),
            inventory.files,
            {},
            where,
            chunk_lines=settings.chunk_lines,
            overlap=settings.chunk_overlap,
            workers=settings.worker_count(),
            embedder=None,
            vectors=None,
            progress=progress,
            repeated=swept.repeated,
            clean=swept.clean,
            modules=modules,
            chunk_cache=chunk_cache(store_root),
            credentials=swept.values,
            later=f"{FACTS} {NO_LLM}" if no_llm else FACTS,
        )
    progress.summary("index", indexed)
    publish_index(where)
    return indexed
