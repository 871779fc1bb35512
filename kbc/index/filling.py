"""The vectors retrieval reads while a build's units are still being embedded.

A build that leaves its units to a background process (:mod:`kbc.index.fill`) publishes its
index at once, naming the model it waits for. Until every unit is in, a query reads the
vectors there are: those the store already held (a snapshot the build wrote of them), the
batches the background process has appended to ``embedding.partial``, and, embedded on the
spot, the units of the chunks the searches put before the ranking model that have none yet.

Ranking only the units that happen to be embedded first would favour them over the rest;
embedding the candidates themselves keeps the model's comparison fair where it decides
(every candidate it weighs has a vector), and what the vector search alone would have found
grows as the background process goes on. Vectors embedded here stay in this process, bounded,
and are never written: the background process owns the partial file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from kbc.domain.models import EmbedUnit
from kbc.index.embed import Embedder
from kbc.index.exact import ExactVectors, load_snapshot
from kbc.index.fill import PARTIAL, read_partial

QUERY_UNITS = 128  # units embedded on the spot for one request, at most
KEPT_UNITS = 20_000  # units embedded on the spot kept between requests

UnitsOf = Callable[[Sequence[str]], list[EmbedUnit]]  # chunk ids -> their units (of every chunk)


class FillingVectors:
    """The vectors of an index being filled: ``held`` (the snapshot the build wrote of the
    units the store already had, by digest), the partial file's, and those embedded here.
    ``units_of`` gives the units of chunks as the background process names them."""

    def __init__(self, index_dir: Path, model_id: str, held: str, embedder: Embedder,
                 units_of: UnitsOf, per_request: int | None = None) -> None:
        self.index_dir = index_dir
        self.model_id = model_id
        self.embedder = embedder
        self.units_of = units_of
        self.per_request = QUERY_UNITS if per_request is None else per_request
        self._held: dict[str, tuple[str, Sequence[float]]] = {}
        snapshot = load_snapshot(index_dir, held) if held else None
        if snapshot is not None:
            self._held = {unit: (snapshot.chunks[i], snapshot.matrix[i])
                          for i, unit in enumerate(snapshot.units)}
        self._partial: dict[str, Sequence[float]] = {}
        self._partial_size = -1
        self._here: dict[str, tuple[str, Sequence[float]]] = {}  # embedded in this process, oldest first
        self._owners: dict[str, str] = {}  # unit id -> chunk id, of the units asked about
        self._exact: ExactVectors | None = None
        self._spent = 0  # units embedded for the current request

    def start_request(self) -> None:
        """A new request: read what the background process has added, and give it its own
        allowance of units to embed on the spot."""
        self._spent = 0
        try:
            size = os.stat(self.index_dir / PARTIAL).st_size
        except OSError:
            size = 0
        if size != self._partial_size:
            rows, matrix, owners = read_partial(self.index_dir, repair=False)
            self._partial = {unit: matrix[row] for unit, row in rows.items()} if matrix is not None else {}
            self._owners.update(owners)
            self._partial_size = size
            self._exact = None

    def _vector(self, unit: str) -> Sequence[float] | None:
        if unit in self._here:
            return self._here[unit][1]
        if unit in self._partial:
            return self._partial[unit]
        return self._held[unit][1] if unit in self._held else None

    def cover(self, chunks: Sequence[str]) -> int:
        """Embed the units of ``chunks`` (in the order given, within the request's allowance)
        that have no vector yet; returns how many were embedded."""
        room = self.per_request - self._spent
        if room <= 0 or not chunks:
            return 0
        wanted = dict.fromkeys(chunks)
        units = [u for u in self.units_of(list(wanted)) if u.chunk_id in wanted]
        for u in units:
            self._owners[u.id] = u.chunk_id
        position = {chunk: i for i, chunk in enumerate(wanted)}
        missing = sorted((u for u in units if self._vector(u.id) is None),
                         key=lambda u: (position[u.chunk_id], u.start_line, u.id))[:room]
        if not missing:
            return 0
        # Similar lengths batched together pad less; the order is fixed by the units alone.
        ordered = sorted(missing, key=lambda u: (len(u.text), u.id))
        vectors = self.embedder.embed([u.text for u in ordered])
        for unit, vector in zip(ordered, vectors, strict=True):
            self._here[unit.id] = (unit.chunk_id, vector)
        while len(self._here) > KEPT_UNITS:
            self._here.pop(next(iter(self._here)))
        self._spent += len(ordered)
        self._exact = None
        return len(ordered)

    def similarities(self, vector: Sequence[float], chunks: Sequence[str]) -> dict[str, float]:
        """As :meth:`ExactVectors.similarities`, over the units of ``chunks`` alone (the whole
        matrix is rebuilt only for a search)."""
        wanted = set(chunks)
        rows = {u.id: (u.chunk_id, found) for u in self.units_of(list(wanted))
                if u.chunk_id in wanted and (found := self._vector(u.id)) is not None}
        return ExactVectors.from_rows(self.model_id, rows).similarities(vector, chunks) if rows else {}

    def exact(self) -> ExactVectors:
        """Every vector there is now, searched exactly (rebuilt only when it has grown)."""
        if self._exact is None:
            rows = dict(self._held)
            owners = self._owners
            rows.update((unit, (owners[unit], vector)) for unit, vector in self._partial.items()
                        if unit in owners)
            rows.update(self._here)
            self._exact = ExactVectors.from_rows(self.model_id, rows)
        return self._exact
