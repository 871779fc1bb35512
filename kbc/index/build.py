"""The index pass: chunk changed files, redact, update the lexical index and the vectors.

Work is proportional to what changed: a file whose blob id equals the one
indexed keeps its chunks, and only units missing from the vector store are
embedded. The vector store is reconciled with the chunk table on every run,
so a run killed half-way is completed by the next.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kbc.analyzers.discover import git_blob_id
from kbc.domain.errors import EmbedderUnavailable, IndexDamaged, VectorStoreError
from kbc.domain.models import KNOWLEDGE_PREFIX, Chunk, ChunkKind, EmbedUnit, FileFacts, SourceFile
from kbc.domain.progress import Reporter
from kbc.domain.timing import PassTiming, Stopwatch
from kbc.domain.views import VIEW_PREFIX
from kbc.index.chunk_cache import ChunkCache, chunk_key, chunk_through_cache
from kbc.index.definitions import definitions_version
from kbc.index.embed import Embedder
from kbc.index.exact import load_snapshot, sweep_snapshots, write_units_snapshot
from kbc.index.history import commit_messages, last_commit_dates
from kbc.index.lexical import PENDING, PRECEDENTS, FileRecord, LexicalIndex, indexed_columns, move_aside
from kbc.index.prepare import chunk_tasks, document_chunks
from kbc.index.progress import LATER
from kbc.index.provenance import MADE_BY, Provenance
from kbc.index.retired import keep_none_next, retire, retired_units
from kbc.index.tokens import TOKENS_VERSION
from kbc.index.units import unit_metadata, units_of
from kbc.index.vectors import VectorStore
from kbc.store.layout import LEXICAL

STAGED = "lexical.next.sqlite"  # the index a build writes, renamed into place when it publishes
CHUNK_KEYS = "chunk_keys"  # meta: path -> the key of what decided its chunks (kbc.index.chunk_cache)

CHUNKER_VERSION = "10"  # 10: text as kbc shows it (kbc.index.chunks.readable), credentials judged
EMBED_BATCH = 256  # units handed to the embedder per call (it batches 32 inside)


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexSummary:
    files: int
    chunks: int
    changed_files: int
    removed_files: int
    units: int
    embedded: int
    removed_units: int  # units the index needed before and needs no more: retired once it is published
    secrets: int
    retrieval: str  # "hybrid" or "lexical"
    note: str
    seconds: float
    embedded_views: int = 0  # of ``embedded``: units of view documents
    passes: tuple[PassTiming, ...] = ()  # chunk, lexical index, embed, vector snapshot
    stale_units: tuple[str, ...] = ()  # vectors not needed: retired once the index is published
    snapshots: tuple[str, ...] = ()  # the digests of the new index's snapshot and the live one's
    pending: int = 0  # units left to embed after the index is published (kbc.index.fill)
    chunks_from_cache: int = 0  # of ``changed_files``: those whose chunks the chunk cache held


def build_index(  # noqa: PLR0913 - the index pass's inputs, passed by name
    root: Path,
    files: Sequence[SourceFile],
    facts: Mapping[str, FileFacts],
    index_dir: Path,
    *,
    chunk_lines: int,
    overlap: int,
    workers: int,
    embedder: Embedder | None,
    vectors: VectorStore | None,
    note: str = "",
    progress: Reporter | None = None,
    documents: Mapping[str, str] | None = None,
    fresh: bool = False,
    embed_tests: bool = False,
    repeated: Mapping[str, tuple[str, ...]] | None = None,
    knowledge: Mapping[str, str] | None = None,
    knowledge_dates: Mapping[str, str] | None = None,
    wait_units: int | None = None,
    clean: frozenset[str] = frozenset(),
    modules: Mapping[str, str] | None = None,
    later: str = "",
    chunk_cache: Path | None = None,
    whole: bool = False,
    credentials: Collection[str] = (),
) -> IndexSummary:
    """Bring the index in line with ``files``, the view ``documents`` (path under
    ``VIEW_PREFIX`` -> Markdown) and the ``knowledge`` documents (path under
    ``@knowledge/<root>/`` -> Markdown, redacted; ``knowledge_dates``: how each is dated,
    "last commit YYYY-MM-DD" or "modified YYYY-MM-DD"). A file is chunked again when what
    decides its chunks changed (its key, :func:`kbc.index.chunk_cache.chunk_key`), its chunks
    taken from the ``chunk_cache`` when that holds them; ``fresh`` chunks everything again,
    reading no cache; ``whole`` (a rebuild past the drift threshold) dates every file again
    as a cold build does; ``credentials``: every credential value found in the repository
    (when they change, nothing cut or embedded before is kept past this build). Vectors are
    kept wherever their unit is unchanged (they are
    addressed by content and model), and those no longer needed are retired, not deleted
    (:mod:`kbc.index.retired`). With
    ``wait_units``, when more units than that lack vectors none are embedded: the index is
    published lexical, naming the model it waits for (``PENDING``), and
    :func:`kbc.index.fill.fill_vectors` embeds them after. ``clean``: the paths the credential
    sweep found nothing in, not scanned again (only values found elsewhere are replaced).
    ``progress`` hears each pass (chunk, lexical index, embed, vector snapshot). A first
    index (``later``: the passes it waits for, kept in meta ``LATER``) cuts the Python files of
    ``modules`` (path -> module name) at the definitions ``ast`` reads; the build after the
    facts chunks every file again.

    The live index is not touched: a copy of it is brought in line and left beside it, for
    :func:`publish_index` to put in place; vectors are only added (those no longer needed are
    listed for :func:`sweep_index` once the index is published)."""
    started = time.perf_counter()
    clock = Stopwatch(progress)
    lexical, note = staged_copy(index_dir, note)
    if lexical.stale:
        lexical.reset()
    try:
        layout = f"{CHUNKER_VERSION}:{TOKENS_VERSION}:{definitions_version()}:{chunk_lines}:{overlap}"
        written = f"first:{layout}" if later else layout
        indexed = lexical.files()
        indexed_paths = set(indexed)
        if fresh or lexical.meta("layout") != layout:
            indexed = {}  # every file is chunked again, replaced in one transaction
        texts = dict(documents or {})
        kinds: dict[str, ChunkKind] = {path: "knowledge" for path in (knowledge or {})}
        texts.update(knowledge or {})
        documented = [
            SourceFile(path, len(text.encode()), git_blob_id(text.encode()), "markdown", text.count("\n") + 1)
            for path, text in sorted(texts.items())
        ]
        current = {f.path: f for f in [*files, *documented]}
        repeated = dict(repeated or {})
        # A file is chunked again when what decides its chunks changed (kbc.index.chunk_cache):
        # its content, its facts' definitions, its module, role, or the credentials found elsewhere.
        tasks = chunk_tasks(root, files, facts, chunk_lines, overlap, repeated, clean, modules)
        del facts  # the definitions are in the tasks: the facts of every file are let go
        keys = {t.path: chunk_key(t, current[t.path].blob, written) for t in tasks}
        held = json.loads(lexical.meta(CHUNK_KEYS) or "{}") if indexed else {}
        # past the drift threshold every file is dated again, as a cold build dates it
        redated = last_commit_dates(root, [f.path for f in files]) if whole and indexed else {}
        changed_files = [f for f in files if held.get(f.path) != keys[f.path] or f.path not in indexed]
        changed_documents = [f for f in documented if f.path not in indexed or indexed[f.path].blob != f.blob]
        changed = [*changed_files, *changed_documents]
        removed = sorted(indexed_paths - set(current))
        if chunk_cache is not None and _exposed(chunk_cache, credentials):
            keep_none_next(index_dir)
        with clock.measure("chunk", len(changed_files), "files") as chunking:
            wanted = {f.path for f in changed_files}
            results, from_cache = chunk_through_cache(
                [t for t in tasks if t.path in wanted], keys, chunk_cache, workers, chunking, fresh=fresh
            )
            for f in changed_documents:
                cut = document_chunks(f.path, texts[f.path], chunk_lines, overlap, kinds.get(f.path, "view"))
                results.append((f.path, cut, 0, [indexed_columns(c) for c in cut]))
        with clock.measure("lexical index"):
            dates = {
                **redated,
                **last_commit_dates(root, [f.path for f in changed_files if f.path not in redated]),
                **(knowledge_dates or {}),
            }
            new_chunks = [c for _, chunks, _, _ in results for c in chunks]
            columns = [c for _, _, _, columns in results for c in columns]
            secrets = {path: count for path, _, count, _ in results}
            records = [
                FileRecord(f.path, f.blob, dates.get(f.path, ""), secrets.get(f.path, 0)) for f in changed
            ]
            wanted |= {f.path for f in changed_documents}
            records += [  # unchanged chunks, but the last commit to touch the file is another
                dataclasses.replace(indexed[path], date=date)
                for path, date in sorted(redated.items())
                if path not in wanted and indexed[path].date != date
            ]
            lexical.replace_files(
                [*removed, *(f.path for f in changed if f.path in indexed_paths)],
                new_chunks,
                records,
                columns,
            )
            lexical.set_meta("layout", written)
            lexical.set_meta(CHUNK_KEYS, json.dumps(keys, sort_keys=True))
            lexical.set_meta(LATER, later)
            # the precedents are read again at every build: HEAD may have moved with no file changed
            lexical.set_meta(PRECEDENTS, json.dumps(commit_messages(root, {f.path for f in files})))
            lexical.commit()
        # What the table was written from is let go before the vectors are made: the model
        # and the vectors read back reuse its memory instead of adding to it.
        del tasks, results, new_chunks, columns, records
        total_secrets = sum(r.secrets for r in lexical.files().values())
        chunk_count = len(lexical.chunk_ids())
        units_total = embedded = embedded_views = 0
        stale_units: list[str] = []
        previous = lexical.meta("vectors")
        retrieval = "lexical"
        pending = 0
        lexical.set_meta(PENDING, "")
        if embedder is not None and vectors is not None and wait_units is not None:
            pending = _unembedded(lexical, embedder.model_id, vectors, embed_tests)
            if pending <= wait_units:
                pending = 0
        made: Provenance | None = None  # what made (or is to make) the index's vectors
        if pending:
            lexical.set_meta(PENDING, embedder.model_id if embedder is not None else "")
            lexical.set_meta("model", "")
            lexical.set_meta("vectors", "")
            made = vectors.made_by() if vectors is not None else None
        else:
            synced = (
                _synced(lexical, embedder, vectors, index_dir, embed_tests, clock)
                if embedder is not None and vectors is not None
                else None
            )
            model, digest = "", ""
            if isinstance(synced, VectorSync) and embedder is not None:
                units_total, embedded, stale_units = synced.units, synced.embedded, synced.stale
                embedded_views = synced.views
                retrieval = "hybrid"
                model, digest, made = embedder.model_id, synced.digest, synced.made
            elif synced is not None:  # the model or the store failed: the index stays lexical
                note = str(synced)
            lexical.set_meta("model", model)
            lexical.set_meta("vectors", digest)
        lexical.set_meta(MADE_BY, made.to_json() if made is not None else "")
        lexical_digest = lexical.meta("vectors")
        lexical.set_meta("retrieval", retrieval)
        lexical.set_meta("note", note)
        seal(lexical)
    finally:
        lexical.close()
    removed_files = sum(1 for path in removed if not path.startswith((VIEW_PREFIX, KNOWLEDGE_PREFIX)))
    return IndexSummary(
        files=len(files),
        chunks=chunk_count,
        changed_files=len(changed_files),
        removed_files=removed_files,
        units=units_total,
        embedded=embedded,
        removed_units=len(set(stale_units) - retired_units(index_dir)) if stale_units else 0,
        secrets=total_secrets,
        retrieval=retrieval,
        note=note,
        seconds=time.perf_counter() - started,
        embedded_views=embedded_views,
        passes=tuple(clock.passes),
        stale_units=tuple(stale_units),
        snapshots=tuple(d for d in (lexical_digest, previous) if d),
        pending=pending,
        chunks_from_cache=from_cache,
    )


def _exposed(cache: Path, credentials: Collection[str]) -> bool:
    """Whether the credential values found changed since the cache's entries were cut (it
    drops them then)."""
    with ChunkCache(cache) as held:
        return held.forget_if_exposed(credentials)


def seal(lexical: LexicalIndex) -> None:
    """Name the index's state (its chunks and the model of its vectors: what a slice's
    fingerprint reads) and commit."""
    state = hashlib.sha256("\n".join(sorted(lexical.chunk_ids())).encode())
    state.update(f"\0{lexical.meta('model')}".encode())
    made = Provenance.from_json(lexical.meta(MADE_BY))
    if made is not None:
        state.update(f"\0{made.key}".encode())
    lexical.set_meta("state", state.hexdigest()[:16])
    lexical.commit()


def _unembedded(lexical: LexicalIndex, model_id: str, vectors: VectorStore, embed_tests: bool) -> int:
    """How many units of the chunk table the vector store lacks."""
    present = vectors.ids()
    return sum(1 for u in units_of(lexical.all_chunks(), model_id, tests=embed_tests) if u.id not in present)


def staged_copy(index_dir: Path, note: str) -> tuple[LexicalIndex, str]:
    """A copy of the live index to write (empty if there is none; a damaged one is moved
    aside, never deleted), and the note saying so."""
    live, staged = index_dir / LEXICAL, index_dir / STAGED
    discard_staged(index_dir)
    if live.is_file():
        try:
            current = LexicalIndex(live)
        except IndexDamaged as exc:
            damaged: IndexDamaged | None = exc
        else:
            damaged = None
            try:
                current.copy_to(staged)
            except sqlite3.DatabaseError as exc:
                damaged = IndexDamaged(f"the lexical index {live} is damaged ({exc})")
            finally:
                current.close()
        if damaged is not None:
            discard_staged(index_dir)
            aside = move_aside(live)
            note = f"{damaged.message}; it was moved to {aside} and every file is indexed again" + (
                f"; {note}" if note else ""
            )
    return LexicalIndex(staged), note


def discard_staged(index_dir: Path) -> None:
    """Remove an index a build staged and never published (a killed build's)."""
    for suffix in ("", "-journal", "-wal", "-shm"):
        (index_dir / (STAGED + suffix)).unlink(missing_ok=True)


def publish_index(index_dir: Path) -> None:
    """Put the staged index in place of the live one (one rename). A WAL file kept under the
    live name (an index of an earlier format, or a reader of one) goes first: SQLite reads
    a WAL file it finds beside a database as that database's, and this one belongs to the
    file the rename replaces (a reader holding it open keeps reading its own build)."""
    staged = index_dir / STAGED
    if staged.is_file():
        for suffix in ("-wal", "-shm"):
            (index_dir / (LEXICAL + suffix)).unlink(missing_ok=True)
        os.replace(staged, index_dir / LEXICAL)


def sweep_index(index_dir: Path, summary: IndexSummary, vectors: VectorStore | None) -> None:
    """After the index is published: retire the vectors no index needs now (kept, within a
    bound, for a state that needs them again: :mod:`kbc.index.retired`) and drop the snapshots
    no index needs (the previous one stays for a reader still on the previous index)."""
    if vectors is not None and summary.retrieval == "hybrid":
        retire(index_dir, vectors, summary.stale_units, summary.units)
    sweep_snapshots(index_dir, set(summary.snapshots))


def index_problem(index_dir: Path) -> str:
    """Why the index in ``index_dir`` needs an index pass though no file changed ("" if none):
    a damaged lexical index or one from another kbc version, or a vector snapshot that is
    not the one the index names."""
    path = index_dir / LEXICAL
    if not path.is_file():
        return "the store has no lexical index"
    try:
        lexical = LexicalIndex(path)
    except IndexDamaged as exc:
        return exc.message
    try:
        if lexical.stale:
            return "the lexical index was written by another kbc version"
        digest = lexical.meta("vectors")
    finally:
        lexical.close()
    if digest and load_snapshot(index_dir, digest) is None:
        return "the exact-search snapshot of the vectors is missing or damaged"
    return ""


@dataclass(frozen=True, slots=True)
class VectorSync:
    units: int
    embedded: int
    stale: list[str]  # ids of vectors held that no unit needs any more
    views: int  # of ``embedded``: units of view documents
    digest: str  # of the units held: names the exact-search snapshot written beside the index
    made: Provenance  # what made the vectors


def _synced(
    lexical: LexicalIndex,
    embedder: Embedder,
    vectors: VectorStore,
    index_dir: Path,
    embed_tests: bool,
    clock: Stopwatch,
) -> VectorSync | str:
    """:func:`_sync_vectors`, or why it could not be done: a model that fails to load when it
    first embeds, a store that fails when first written (the vectors written so far are kept)."""
    try:
        return _sync_vectors(lexical, embedder, vectors, index_dir, embed_tests, clock)
    except (EmbedderUnavailable, VectorStoreError) as exc:
        return exc.message


def _sync_vectors(
    lexical: LexicalIndex,
    embedder: Embedder,
    vectors: VectorStore,
    index_dir: Path,
    embed_tests: bool = False,
    clock: Stopwatch | None = None,
) -> VectorSync:
    """Make the vector store hold every unit of the chunk table, and write the
    snapshot of its vectors that retrieval searches exactly (the clock's reporter hears how
    far the embedding has come)."""
    clock = clock or Stopwatch()
    units, missing, extra, chunks = _embed_missing(lexical, embedder, vectors, embed_tests, clock)
    made = vectors.made_by() or embedder.provenance()
    with clock.measure("vector snapshot"):
        digest = write_units_snapshot(index_dir, made.key, lexical.meta("vectors"), units, vectors)
    views = sum(1 for u in missing if chunks[u.chunk_id].kind == "view")
    return VectorSync(len(units), len(missing), extra, views, digest, made)


def _embed_missing(
    lexical: LexicalIndex,
    embedder: Embedder,
    vectors: VectorStore,
    embed_tests: bool,
    clock: Stopwatch,
) -> tuple[list[EmbedUnit], list[EmbedUnit], list[str], dict[str, Chunk]]:
    """Embed and store the units the store lacks, and list those it no longer needs (deleted
    only once the index is published): (every unit, the units embedded, the ids no longer
    needed, the chunks by id). The clock gets the model's seconds ("embed") apart from the
    store's ("vector store")."""
    started = time.perf_counter()
    model_seconds = 0.0
    with clock.reporter.running("embed") as embedding:
        chunks = {c.id: c for c in lexical.all_chunks()}
        units = units_of(chunks.values(), embedder.model_id, tests=embed_tests)
        wanted = {u.id for u in units}
        present = vectors.ids()
        extra = sorted(present - wanted)
        # Similar lengths batched together pad less: the model's cost follows the longest input.
        missing = sorted((u for u in units if u.id not in present), key=lambda u: (len(u.text), u.id))
        embedding.expect(len(missing), "units")
        for start in range(0, len(missing), EMBED_BATCH):
            batch = missing[start : start + EMBED_BATCH]
            before = time.perf_counter()
            embedded = embedder.embed([u.text for u in batch])
            model_seconds += time.perf_counter() - before
            vectors.add(
                [u.id for u in batch],
                embedded,
                [unit_metadata(u, chunks[u.chunk_id]) for u in batch],
                [u.text for u in batch],
            )
            embedding.advance(len(batch))
    clock.record("embed", model_seconds)
    clock.record("vector store", time.perf_counter() - started - model_seconds)
    return units, missing, extra, chunks
