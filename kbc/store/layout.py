"""Where a store keeps what: the one module that names the store's files.

<store>/state.json            the record of the last completed build (written last)
<store>/building.json         a build under way (or killed): removed when it completes
<store>/CURRENT, gen-*/       the facts (kbc.store.facts_store)
<store>/views/views.jsonl     the views
<store>/cache/analysis.sqlite per-file analysis results and credential counts
<store>/cache/chunks.sqlite   per-file chunks, keyed by what decides them (kbc.index.chunk_cache)
<store>/cache/prose.sqlite    the LLM's validated prose per view
<store>/index/lexical.sqlite  chunks and their FTS5 index
<store>/index/chroma/         the local vector store
<store>/index/retired.sqlite  vectors no index needs now, kept for a switch back (kbc.index.retired)
<store>/index/embedding.partial  vectors embedded after the build, not yet stored (kbc.index.fill)
<store>/index/vectors.json    the exact-search snapshot's pointer (kbc.index.exact)
<store>/gaps.sqlite           the knowledge-gap log
<store>/refresh.json          when the last refresh ran and how it ended
<store>/knowledge.json        the knowledge roots indexed: their documents and scopes
<store>/lock                  the writer lock
"""

from __future__ import annotations

import os
from pathlib import Path

from kbc.domain.errors import ConfigError, FieldError
from kbc.domain.settings import Settings

STATE = "state.json"
GAPS = "gaps.sqlite"
LEXICAL = "lexical.sqlite"
CHROMA = "chroma"
PARTIAL = "embedding.partial"  # batches embedded so far: a JSON line of unit ids, then their float32 rows


def index_dir(store_root: Path) -> Path:
    return store_root / "index"


def lexical_path(store_root: Path) -> Path:
    return index_dir(store_root) / LEXICAL


def chroma_dir(index: Path) -> Path:
    """The local vector store inside an index folder."""
    return index / CHROMA


def analysis_cache(store_root: Path) -> Path:
    return store_root / "cache" / "analysis.sqlite"


def chunk_cache(store_root: Path) -> Path:
    return store_root / "cache" / "chunks.sqlite"


def prose_cache(store_root: Path) -> Path:
    return store_root / "cache" / "prose.sqlite"


def rerank_cache(store_root: Path) -> Path:
    return store_root / "cache" / "rerank.sqlite"


def journal_file(store_root: Path) -> Path:
    return store_root / "building.json"


def lock_file(store_root: Path) -> Path:
    return store_root / "lock"


def fill_lock_file(store_root: Path) -> Path:
    """Held by the one process filling in the vectors a build left to embed."""
    return store_root / "embedding.lock"


def state_file(store_root: Path) -> Path:
    return store_root / STATE


def knowledge_file(store_root: Path) -> Path:
    return store_root / "knowledge.json"


def refresh_file(store_root: Path) -> Path:
    return store_root / "refresh.json"


def gap_log(store_root: Path) -> Path:
    return store_root / GAPS


def views_file(store_root: Path) -> Path:
    return store_root / "views" / "views.jsonl"


def store_path(root: Path, settings: Settings, override: Path | None = None) -> Path:
    """The store of the repository at ``root``: ``override`` (a flag), else the configured
    path (relative to the repository), else ``<root>/.kbc``, which a repository cannot point
    elsewhere by committing a link."""
    if override is not None:
        return override.resolve()
    if settings.store:
        configured = Path(settings.store).expanduser()
        return (configured if configured.is_absolute() else root / configured).resolve()
    base = root.resolve()
    default = base / ".kbc"
    if default.is_symlink() and not default.resolve().is_relative_to(base):
        raise ConfigError(
            [
                FieldError(
                    str(default),
                    "store.path",
                    f"is a link to {os.readlink(default)}, outside the repository",
                    "remove the link, or name a store folder with --store or KBC_STORE",
                )
            ]
        )
    return default
