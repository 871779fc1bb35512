"""The vectors a retriever searches: the embedder, the exact vectors the index names, the
query embeddings kept between requests, and why retrieval is lexical when it is."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kbc.domain.errors import EmbedderUnavailable, VectorStoreError
from kbc.index.embed import Embedder
from kbc.index.exact import ExactVectors, load_snapshot, read_store
from kbc.index.lexical import PENDING, LexicalIndex
from kbc.index.progress import LATER, first_index_note, progress_of
from kbc.index.provenance import MADE_BY, unsearchable
from kbc.index.retired import retired_units
from kbc.index.units import best_by_chunk
from kbc.index.vectors import VectorStore

QUERY_VECTORS = 32  # query embeddings kept


@dataclass(slots=True)
class VectorHits:
    """What the vectors find for a query: the code's chunks and team knowledge's, each best
    first with its similarity, and the query's embedding (empty and None when lexical)."""

    vector: list[str] = field(default_factory=list)
    similarity: dict[str, float] = field(default_factory=dict)
    known_vector: list[str] = field(default_factory=list)
    known_similarity: dict[str, float] = field(default_factory=dict)
    embedding: list[float] | None = None


class VectorSide:
    """The embedding side of one opened index. Retrieval is hybrid while ``embedder`` is set;
    it turns lexical for good (saying why in ``note``) when the index holds no vectors of the
    embedder's model, when they cannot be read or were made otherwise than its queries, or
    when the model fails."""

    def __init__(
        self,
        index_dir: Path,
        lexical: LexicalIndex,
        state: str,
        embedder: Embedder | None,
        vectors: VectorStore | None,
        note: str,
    ) -> None:
        self.index_dir = index_dir
        self.lexical = lexical
        self.state = state
        self.embedder = embedder if vectors is not None else None
        self.vectors = vectors
        self.note = note
        self.waiting = ""  # the model whose vectors are being embedded after the build (kbc embed)
        self.later = lexical.meta(LATER)  # a first index's: the passes it waits for
        if self.embedder is not None and lexical.meta("model") != self.embedder.model_id:
            if lexical.meta(PENDING) == self.embedder.model_id or self.later:
                self.waiting = self.embedder.model_id
            else:
                self.note = (
                    f"the index holds no vectors for {self.embedder.model_id}; run `kbc build` to embed"
                )
            self.embedder = self.vectors = None
        self._exact: tuple[str, ExactVectors] | None = None  # (the digest the index named, vectors)
        self._queries: dict[str, list[float]] = {}  # the last queries' embeddings, oldest first

    @property
    def mode(self) -> str:
        return "hybrid" if self.embedder is not None else "lexical"

    def current_note(self) -> str:
        """Why retrieval is lexical, if it is: for an index whose vectors are being embedded,
        how far that has come (read at each request); for a first index, what it lacks."""
        if self.later:
            return first_index_note(bool(self.waiting))
        if not self.waiting:
            return self.note
        found = progress_of(self.index_dir, self.state, self.waiting)
        done = f"{found.embedded} of {found.units} units" if found is not None else "not started"
        return f"vectors being embedded after the build: {done}; `kbc embed` finishes"

    def loaded(self) -> ExactVectors | None:
        """The exact vectors read so far (None before the first hybrid search)."""
        return self._exact[1] if self._exact is not None else None

    def _unusable(self, why: str) -> None:
        self.embedder = self.vectors = None
        self.note = why

    def query_vector(self, query: str) -> list[float] | None:
        """The query's embedding; the last few are kept, since a task is often asked again (at
        another budget, for another use case, by ask after retrieve). None when the model
        fails to load: retrieval is lexical from then on, saying why."""
        assert self.embedder is not None
        found = self._queries.pop(query, None)
        if found is None:
            try:
                (found,) = self.embedder.embed_query([query])
            except EmbedderUnavailable as exc:
                self._unusable(exc.message)
                return None
        self._queries[query] = found
        while len(self._queries) > QUERY_VECTORS:
            self._queries.pop(next(iter(self._queries)))
        return found

    def exact_vectors(self) -> ExactVectors | None:
        """The snapshot the index names, read once; else the store's vectors; else None (none
        can be read, or they were not made as the embedder makes its queries), and retrieval
        is lexical from then on, saying why."""
        assert self.embedder is not None and self.vectors is not None
        digest = self.lexical.meta("vectors")
        if self._exact is None or self._exact[0] != digest:
            try:
                found = load_snapshot(self.index_dir, digest) or read_store(
                    self.vectors,
                    self.embedder.model_id,
                    set(self.lexical.chunk_ids()),
                    retired_units(self.index_dir),
                )
                problem = unsearchable(self.lexical.meta(MADE_BY), self.embedder.provenance, found.width)
            except (VectorStoreError, EmbedderUnavailable) as exc:
                problem = exc.message
            if problem:  # vectors of another width, or of another model: never scored
                self._unusable(problem)
                return None
            self._exact = (digest, found)
        return self._exact[1]

    def hits(self, text: str, knowledge: frozenset[str], units: int, candidates: int) -> VectorHits:
        """The best ``candidates`` chunks of the code by their best unit among the ``units``
        nearest ``text``, and team knowledge's (``knowledge``: its chunk ids), apart."""
        found = VectorHits()
        if self.embedder is None or self.vectors is None:
            return found
        exact = self.exact_vectors()
        found.embedding = self.query_vector(text) if exact is not None else None
        if exact is None or found.embedding is None:
            return found
        extra = exact.count_of(knowledge) if knowledge else 0
        hits = exact.search(found.embedding, units + extra)
        code_hits = [h for h in hits if h.chunk not in knowledge][:units]
        best = best_by_chunk([(h.chunk, h.similarity) for h in code_hits])
        found.vector = [cid for cid, _ in sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))][:candidates]
        found.similarity = {cid: best[cid] for cid in found.vector}
        closest = best_by_chunk([(h.chunk, h.similarity) for h in hits if h.chunk in knowledge])
        found.known_vector = [cid for cid, _ in sorted(closest.items(), key=lambda kv: (-kv[1], kv[0]))]
        found.known_similarity = closest
        return found
