"""Vectors filled in after the index is published.

A build that finds more units to embed than it waits for publishes its index lexical,
naming the model it waits for (meta ``pending``). The units are then embedded here, in
batches, each batch appended to ``embedding.partial`` beside the index as soon as the model
returns it (a run killed half-way loses at most one batch; the next one resumes), with the
count so far in ``embedding.json``. When every unit has a vector they go into the vector
store, the exact-search snapshot is written, and the index is published again, naming them.

Retrieval stays lexical until then: a slice ranked over the vectors of some units and not
others favours the units that happen to be embedded first.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbc.domain.models import Chunk, EmbedUnit
from kbc.index.build import EMBED_BATCH, publish_index, seal, staged_copy
from kbc.index.embed import Embedder
from kbc.index.exact import sweep_snapshots, write_units_snapshot
from kbc.index.lexical import PENDING, LexicalIndex
from kbc.index.progress import PROGRESS, Progress, write_progress
from kbc.index.provenance import MADE_BY, Provenance
from kbc.index.retired import retire
from kbc.index.units import unit_metadata, units_of
from kbc.index.vectors import VectorStore
from kbc.store.layout import LEXICAL, PARTIAL

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]
else:
    Matrix = Any


@dataclass(frozen=True, slots=True)
class Pending:
    """What a published index waits for: the model, the index state, its units and chunks."""

    model: str
    state: str
    units: list[EmbedUnit]
    chunks: dict[str, Chunk]


def pending_of(index_dir: Path, embed_tests: bool) -> Pending | None:
    """What the live index waits for, or None when it waits for nothing."""
    path = index_dir / LEXICAL
    if not path.is_file():
        return None
    lexical = LexicalIndex(path)
    try:
        model = lexical.meta(PENDING)
        if not model or lexical.stale:
            return None
        chunks = {c.id: c for c in lexical.all_chunks()}
        return Pending(
            model, lexical.meta("state"), units_of(chunks.values(), model, tests=embed_tests), chunks
        )
    finally:
        lexical.close()


def read_partial(index_dir: Path) -> tuple[dict[str, int], Matrix | None]:
    """The whole batches of the partial file: unit id -> row, and the rows (None when there
    are none). A batch cut short by a killed run is dropped, and cut off the file, so that
    the next batch follows whole ones."""
    import numpy as np

    path = index_dir / PARTIAL
    try:
        data = path.read_bytes()
    except OSError:
        return {}, None
    offset = 0
    ids: list[str] = []
    parts: list[Matrix] = []
    while offset < len(data):
        end = data.find(b"\n", offset)
        if end < 0:
            break
        try:
            head = json.loads(data[offset:end])
            batch, width = [str(i) for i in head["ids"]], int(head["dim"])
        except (ValueError, KeyError, TypeError):
            break
        size = len(batch) * width * 4
        if end + 1 + size > len(data) or (parts and width != parts[0].shape[1]):
            break
        parts.append(np.frombuffer(data[end + 1 : end + 1 + size], dtype="<f4").reshape(len(batch), width))
        ids += batch
        offset = end + 1 + size
    if offset < len(data):
        with path.open("r+b") as handle:
            handle.truncate(offset)
    if not parts:
        return {}, None
    rows = {unit: i for i, unit in enumerate(ids)}
    matrix: Matrix = np.concatenate(parts)
    return rows, matrix


def _append_partial(index_dir: Path, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
    import numpy as np

    matrix = np.asarray(vectors, dtype="<f4")
    head = json.dumps({"ids": list(ids), "dim": int(matrix.shape[1])}, separators=(",", ":"))
    with (index_dir / PARTIAL).open("ab") as handle:
        handle.write(head.encode() + b"\n" + matrix.tobytes())
        handle.flush()
        os.fsync(handle.fileno())


def embed_pending(
    index_dir: Path,
    pending: Pending,
    embedder: Embedder,
    present: set[str],
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Embed the units neither the store (``present``) nor the partial file holds, appending
    each batch to the partial file; returns how many were embedded now."""
    held, _ = read_partial(index_dir)
    missing = sorted(
        (u for u in pending.units if u.id not in present and u.id not in held),
        key=lambda u: (len(u.text), u.id),
    )
    done = len(pending.units) - len(missing)

    def report(count: int) -> None:
        write_progress(
            index_dir,
            Progress(pending.model, pending.state, len(pending.units), count, os.getpid(), time.time()),
        )
        if progress is not None:
            progress(count, len(pending.units))

    report(done)
    for start in range(0, len(missing), EMBED_BATCH):
        batch = missing[start : start + EMBED_BATCH]
        _append_partial(index_dir, [u.id for u in batch], embedder.embed([u.text for u in batch]))
        report(done + start + len(batch))
    return len(missing)


def publish_filled(index_dir: Path, pending: Pending, vectors: VectorStore) -> str:
    """Put the partial file's vectors in the store, write the snapshot of every unit's and
    publish the index naming it; "" when the live index is no longer the one ``pending``
    describes (a build published another since). The caller holds the writer lock."""
    live = LexicalIndex(index_dir / LEXICAL)
    try:
        same = live.meta(PENDING) == pending.model and live.meta("state") == pending.state
    finally:
        live.close()
    if not same:
        return ""
    present = vectors.ids()
    rows, matrix = read_partial(index_dir)
    adding = [u for u in pending.units if u.id not in present and u.id in rows]
    for start in range(0, len(adding), EMBED_BATCH):
        batch = adding[start : start + EMBED_BATCH]
        assert matrix is not None
        vectors.add(
            [u.id for u in batch],
            [matrix[rows[u.id]].tolist() for u in batch],
            [unit_metadata(u, pending.chunks[u.chunk_id]) for u in batch],
            [u.text for u in batch],
        )
    made = vectors.made_by() or Provenance(pending.model, matrix.shape[1] if matrix is not None else 0)
    digest = write_units_snapshot(index_dir, made.key, "", pending.units, vectors)
    staged, _ = staged_copy(index_dir, "")
    try:
        staged.set_meta(PENDING, "")
        staged.set_meta("model", pending.model)
        staged.set_meta("vectors", digest)
        staged.set_meta(MADE_BY, made.to_json())
        staged.set_meta("retrieval", "hybrid")
        seal(staged)
    finally:
        staged.close()
    publish_index(index_dir)
    retire(index_dir, vectors, present - {u.id for u in pending.units}, len(pending.units))
    sweep_snapshots(index_dir, {digest})
    forget_partial(index_dir)
    return digest


def forget_partial(index_dir: Path) -> None:
    for name in (PARTIAL, PROGRESS):
        (index_dir / name).unlink(missing_ok=True)
