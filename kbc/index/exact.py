"""Exact vector search over a snapshot of the vector store.

Chroma's HNSW search is approximate, and which neighbours it returns varies
between processes that open the same collection: the same query gave four
different top-300 lists in eight processes on an 11k-unit collection. Slices
built from it would not be byte-identical for the same inputs. So retrieval
scores every unit exactly: each index run keeps the vectors the store holds
beside the lexical index as one matrix (``vectors-<digest>.npy``) with a
small JSON file (``vectors-<digest>.json``) that lists the rows' unit and
chunk ids; the lexical index names the digest of its snapshot. A query is one
matrix-vector product (about 1.5 ms for eleven thousand units of 384
dimensions), and ties are broken by unit id.

Both files are written whole, the JSON file last, and a new snapshot never
replaces an old one: the build that wrote it removes the snapshots no longer
named once it has published its index (:func:`sweep_snapshots`), so a reader
of the previous index still finds its own. When the snapshot is missing or
does not match the index, the vectors are read back from the store instead
(slower to open, same answers).
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbc.domain.errors import KbcError
from kbc.domain.models import EmbedUnit
from kbc.index.vectors import VectorStore
from kbc.store.files import write_atomic

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]
else:
    Matrix = Any

SNAPSHOT = "vectors-{digest}.json"
READ_PAGE = 500  # vectors read back from the store at once when a snapshot is written


def digest_of(model_id: str, ids: Iterable[str]) -> str:
    """What a set of units embedded by ``model_id`` (what made them: the model, the width, a
    remote model's fingerprint) is called: it changes when they do."""
    return hashlib.sha256("\n".join([model_id, *sorted(ids)]).encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class ExactHit:
    unit: str
    chunk: str
    similarity: float  # cosine similarity, higher is closer


class ExactVectors:
    """Unit vectors (rows in unit-id order) with their unit and chunk ids."""

    def __init__(self, model_id: str, units: Sequence[str], chunks: Sequence[str], matrix: Matrix) -> None:
        if len(units) != len(chunks) or matrix.shape[0] != len(units):
            raise ValueError("a vector snapshot needs one unit id and one chunk id per row")
        self.model_id = model_id
        self.units = list(units)
        self.chunks = list(chunks)
        self.matrix = matrix
        self.digest = digest_of(model_id, self.units)
        self._norms: Matrix | None = None
        self._rows: dict[str, list[int]] | None = None  # chunk id -> its rows

    @classmethod
    def from_rows(
        cls, model_id: str, rows: Mapping[str, tuple[str, Sequence[float] | Matrix]]
    ) -> ExactVectors:
        """From unit id -> (chunk id, vector), the vectors kept as the store holds them."""
        import numpy as np

        units = sorted(rows)
        dim = len(rows[units[0]][1]) if units else 0
        matrix = np.zeros((len(units), dim), dtype=np.float32)
        for i, unit in enumerate(units):
            matrix[i] = rows[unit][1]
        return cls(model_id, units, [rows[u][0] for u in units], matrix)

    @property
    def width(self) -> int:
        """The width of its vectors (0 when it holds none)."""
        return int(self.matrix.shape[1]) if self.matrix.ndim == 2 else 0

    def count_of(self, chunks: frozenset[str]) -> int:
        """How many units belong to ``chunks``."""
        return sum(1 for chunk in self.chunks if chunk in chunks)

    def search(self, vector: Sequence[float], limit: int) -> list[ExactHit]:
        """The ``limit`` units closest to ``vector``, closest first, ties by unit id."""
        import numpy as np

        count = len(self.units)
        if count == 0 or limit < 1:
            return []
        if self._norms is None:
            self._norms = _norms(self.matrix)
        scores = _cosines(self.matrix, self._norms, vector)
        if limit < count:
            cut = scores[np.argpartition(-scores, limit - 1)[limit - 1]]
            candidates = np.flatnonzero(scores >= cut)  # every unit tied at the cut, too
        else:
            candidates = np.arange(count)
        best = sorted(candidates.tolist(), key=lambda i: (-float(scores[i]), self.units[i]))[:limit]
        return [ExactHit(self.units[i], self.chunks[i], float(scores[i])) for i in best]

    def similarities(self, vector: Sequence[float], chunks: Sequence[str]) -> dict[str, float]:
        """Chunk id -> the cosine similarity of its closest unit to ``vector``, for those of
        ``chunks`` that have vectors."""
        if self._rows is None:
            rows: dict[str, list[int]] = {}
            for i, chunk in enumerate(self.chunks):
                rows.setdefault(chunk, []).append(i)
            self._rows = rows
        wanted = sorted({i for chunk in chunks for i in self._rows.get(chunk, [])})
        if not wanted:
            return {}
        picked = self.matrix[wanted]
        scores = _cosines(picked, _norms(picked), vector)
        found: dict[str, float] = {}
        for row, score in zip(wanted, scores.tolist(), strict=True):
            chunk = self.chunks[row]
            found[chunk] = max(found.get(chunk, -1.0), float(score))
        return found


def _norms(matrix: Matrix) -> Matrix:
    """Each row's length, 1 for an all-zero row (its similarities are then 0)."""
    import numpy as np

    norms: Matrix = np.linalg.norm(matrix, axis=1)
    norms[norms == 0] = 1.0
    return norms


def _cosines(matrix: Matrix, norms: Matrix, vector: Sequence[float]) -> Matrix:
    """The cosine similarity of each row to ``vector``. einsum's own loop, not BLAS: the same
    sums in the same order whatever the thread settings (and whichever rows are asked), and no
    BLAS threads left spinning against the embedding model's."""
    import numpy as np

    query = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(query))
    if norm > 0:
        query = query / norm
    scores: Matrix = np.einsum("ij,j->i", matrix, query) / norms
    return scores


def load_snapshot(index_dir: Path, digest: str) -> ExactVectors | None:
    """The snapshot in ``index_dir`` when it is whole and is the one called ``digest``."""
    import numpy as np

    if not digest or not digest.isalnum():
        return None
    try:
        meta = json.loads((index_dir / SNAPSHOT.format(digest=digest)).read_text())
        if meta.get("digest") != digest:
            return None
        matrix = np.load(index_dir / str(meta["matrix"]), mmap_mode="r")
        snapshot = ExactVectors(str(meta["model"]), meta["units"], meta["chunks"], matrix)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return snapshot if snapshot.digest == digest else None


def write_snapshot(index_dir: Path, snapshot: ExactVectors) -> None:
    """Write the matrix under its digest, then the JSON file that makes it whole; drop what
    a killed run left half-written."""
    import numpy as np

    name = f"vectors-{snapshot.digest}.npy"
    for leftover in index_dir.glob(".vectors*"):  # half-written by a run that was killed
        leftover.unlink(missing_ok=True)
    matrix = io.BytesIO()
    np.save(matrix, np.ascontiguousarray(snapshot.matrix, dtype=np.float32))
    write_atomic(index_dir / name, matrix.getvalue())
    meta = {
        "digest": snapshot.digest,
        "model": snapshot.model_id,
        "matrix": name,
        "units": snapshot.units,
        "chunks": snapshot.chunks,
    }
    write_atomic(index_dir / SNAPSHOT.format(digest=snapshot.digest), json.dumps(meta, separators=(",", ":")))


def sweep_snapshots(index_dir: Path, keep: set[str]) -> None:
    """Remove every snapshot whose digest is not in ``keep``."""
    for old in [
        *index_dir.glob("vectors-*.npy"),
        *index_dir.glob("vectors-*.json"),
        *index_dir.glob("vectors.json"),
    ]:
        if old.stem.removeprefix("vectors-") not in keep:
            old.unlink(missing_ok=True)


def read_store(
    store: VectorStore, model_id: str, chunks: set[str] | None = None, retired: Collection[str] = ()
) -> ExactVectors:
    """Every vector the store holds (of the ``chunks`` given: the store may also hold those
    of a build not yet published; but the ``retired`` ones, kept for a state that needs them
    again), with its chunk id (the slow way to a snapshot), keyed by what the store records
    made them (by ``model_id`` when it holds none)."""
    rows = store.vectors(None)
    if chunks is not None:
        rows = {unit: row for unit, row in rows.items() if row[0] in chunks}
    if retired:
        rows = {unit: row for unit, row in rows.items() if unit not in retired}
    made = store.made_by()
    return ExactVectors.from_rows(made.key if made is not None else model_id, rows)


def write_units_snapshot(
    index_dir: Path, key: str, previous: str, units: Sequence[EmbedUnit], vectors: VectorStore
) -> str:
    """The snapshot of ``units``, whose vectors are keyed ``key`` (what made them:
    :attr:`kbc.index.provenance.Provenance.key`): rows of the last snapshot that still hold,
    the rest read back from the store (not taken from the embedder: the store keeps its own
    rounding of a vector, and a snapshot must equal what the store would give)."""
    owners = {u.id: u.chunk_id for u in units}
    old = load_snapshot(index_dir, previous)
    if old is not None and old.digest == digest_of(key, owners):
        return old.digest
    import numpy as np

    rows: dict[str, tuple[str, Sequence[float] | Matrix]] = {}
    if old is not None and old.model_id == key:  # vectors made otherwise are not taken
        rows = {unit: (owners[unit], old.matrix[i]) for i, unit in enumerate(old.units) if unit in owners}
    lacking = sorted(set(owners) - set(rows))
    # Read back a page at a time, each vector kept as the float32 row the matrix will hold (the
    # store's own values, unchanged): as Python floats the whole store would be read at once,
    # eight times the matrix's size.
    for start in range(0, len(lacking), READ_PAGE):
        page = vectors.embeddings(lacking[start : start + READ_PAGE])
        rows.update(
            (unit, (owners[unit], np.asarray(vector, dtype=np.float32))) for unit, vector in page.items()
        )
    absent = set(owners) - set(rows)
    if absent:
        raise KbcError(
            f"the vector store lacks {len(absent)} of the units it was just given",
            hint="run `kbc build` again; if it persists, delete the store's index folder",
        )
    snapshot = ExactVectors.from_rows(key, rows)
    write_snapshot(index_dir, snapshot)
    return snapshot.digest
