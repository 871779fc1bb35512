"""Retrieve a precision slice: search, fuse, boost, pack, render.

A :class:`Retriever` opens the indexes once and answers many requests (the
CLI makes one; a server keeps one). The same index state and the same request
give byte-identical output.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kbc.domain.errors import KbcError, VectorStoreError
from kbc.domain.models import KNOWLEDGE_PREFIX, Chunk, FileFacts, GraphFacts
from kbc.domain.views import VIEW_KINDS
from kbc.index.embed import Embedder
from kbc.index.exact import ExactVectors, load_snapshot, read_store
from kbc.index.lexical import LexicalIndex
from kbc.index.tokencount import TokenCounter
from kbc.index.units import best_by_chunk
from kbc.index.vectors import VectorStore
from kbc.retrieval import rank
from kbc.retrieval.matched import Matcher
from kbc.retrieval.neighbours import SymbolNeighbours
from kbc.retrieval.pack import pack
from kbc.retrieval.profiles import Profile
from kbc.retrieval.rank import FileGraph, expand, files_in_order, finish, fuse, seeds
from kbc.store.layout import LEXICAL

CANDIDATES = 200  # hits taken from each search before fusion
LEXICAL_POOL = 2000  # BM25 hits kept to order the other units of the best files (about as fast)
VECTOR_UNITS = 300  # unit hits asked of the vector store (several per chunk)
QUERY_VECTORS = 32  # query embeddings kept
KEPT_KEYS = 50_000  # chunks' duplicate-comparison texts kept between searches


@dataclass(frozen=True, slots=True)
class Evidence:
    """How strongly the indexes answered a query, for the knowledge-gap log."""

    lexical_hits: int  # chunks that matched a query term
    best_similarity: float  # cosine similarity of the best embedded unit (-1 when lexical only)
    scores: tuple[float, ...]  # fused scores of the top ten, best first


@dataclass(frozen=True, slots=True)
class Ranking:
    ranked: list[tuple[str, float]]  # (chunk id, fused score), best first
    chunks: dict[str, Chunk]
    evidence: Evidence
    matched: tuple[dict[str, Any], ...] = ()  # what the query named and what it matched


@dataclass(frozen=True, slots=True)
class SliceItem:
    id: str
    path: str
    start_line: int
    end_line: int
    kind: str
    score: float
    tokens: int


@dataclass(frozen=True, slots=True)
class Slice:
    use_case: str
    budget: int
    tokens: int
    fingerprint: str
    retrieval: str  # "hybrid" or "lexical"
    items: tuple[SliceItem, ...]
    text: str
    note: str = ""
    matched: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> str:
        data: dict[str, Any] = {
            "use_case": self.use_case, "budget": self.budget, "tokens": self.tokens,
            "fingerprint": self.fingerprint, "retrieval": self.retrieval, "matched": list(self.matched),
            "items": [{"id": i.id, "path": i.path, "start_line": i.start_line,
                       "end_line": i.end_line, "kind": i.kind, "score": round(i.score, 8),
                       "tokens": i.tokens} for i in self.items],
            "text": self.text,
        }
        return json.dumps(data, indent=1, ensure_ascii=False)


def without(found: Ranking, exclude: frozenset[str]) -> Ranking:
    """``found`` without the chunks of the documents in ``exclude``."""
    if not exclude:
        return found
    kept = [(cid, score) for cid, score in found.ranked if found.chunks[cid].path not in exclude]
    return Ranking(kept, found.chunks, found.evidence, found.matched)


class Retriever:
    def __init__(self, index_dir: Path, graph: GraphFacts | None, module_paths: dict[str, str],
                 symbol_paths: dict[str, str], counter: TokenCounter,
                 embedder: Embedder | None = None, vectors: VectorStore | None = None,
                 note: str = "", facts: Sequence[FileFacts] = (), scripts: Sequence[str] = (),
                 cochange: Mapping[tuple[str, str], float] | None = None) -> None:
        self.index_dir = index_dir
        path = index_dir / LEXICAL
        if not path.is_file():
            raise KbcError(f"no index at {index_dir}", hint="run `kbc build` on the repository first")
        self.lexical = LexicalIndex(path)
        if self.lexical.stale:
            self.lexical.close()
            raise KbcError(f"the index at {index_dir} was written by another kbc version",
                           hint="run `kbc build` to bring it up to date")
        self.lexical.pin()
        self.dates = {p: r.date for p, r in self.lexical.files().items()}
        self.has_knowledge = any(p.startswith(KNOWLEDGE_PREFIX) for p in self.dates)
        self.state = self.lexical.meta("state")
        indexed_model = self.lexical.meta("model")
        self.embedder = embedder if vectors is not None else None
        self.vectors = vectors
        self.note = note
        if self.embedder is not None and indexed_model != self.embedder.model_id:
            self.note = (f"the index holds no vectors for {self.embedder.model_id}; "
                         "run `kbc build` to embed")
            self.embedder = self.vectors = None
        self.graph = FileGraph.from_facts(graph, module_paths, symbol_paths, cochange) if graph else None
        self.counter = counter
        self.last_evidence = Evidence(0, -1.0, ())  # of the last retrieve, for the gap log
        self._exact: tuple[str, ExactVectors] | None = None  # (the digest the index named, vectors)
        self.facts = facts
        self.scripts = scripts  # the console scripts the packaging metadata declares
        self._matcher: Matcher | None = None
        self._vectors: dict[str, list[float]] = {}  # the last queries' embeddings, oldest first
        self._graph_facts = graph
        self._neighbours: SymbolNeighbours | None = None
        self._knowledge: frozenset[str] | None = None
        self._keys: dict[str, str] = {}  # chunk id -> its text as compared for duplicates

    def _query_vector(self, query: str) -> list[float]:
        """The query's embedding; the last few are kept, since a task is often asked again (at
        another budget, for another use case, by ask after retrieve)."""
        assert self.embedder is not None
        found = self._vectors.pop(query, None)
        if found is None:
            (found,) = self.embedder.embed_query([query])
        self._vectors[query] = found
        while len(self._vectors) > QUERY_VECTORS:
            self._vectors.pop(next(iter(self._vectors)))
        return found

    def _near(self, seeded: Sequence[str], chunks: dict[str, Chunk]) -> list[str]:
        """Units of the definitions around the seeds' (added to ``chunks``), strongest first."""
        if self._graph_facts is None or not self.facts:
            return []
        matcher = self.matcher()
        if self._neighbours is None:
            self._neighbours = SymbolNeighbours(self._graph_facts, self.facts, matcher.lookup.table)
        names = [chunks[cid].symbols[0] for cid in seeded
                 if cid in chunks and chunks[cid].symbols and chunks[cid].unit != "window"]
        near = [cid for name in self._neighbours.around(names) if (cid := matcher.definition(name))]
        missing = [cid for cid in near if cid not in chunks]
        chunks.update(self.lexical.chunks(missing))
        return list(dict.fromkeys(near))

    def _cited(self, fused: Mapping[str, float], chunks: dict[str, Chunk], profile: Profile) -> list[str]:
        """The code units the best view chunks cite (added to ``chunks``), best view first,
        each view's citations in its order: where a view found for the task points."""
        best = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:rank.SEEDS]
        views = [cid for cid, _ in best if chunks[cid].kind == "view"
                 and profile.weight("view", chunks[cid].role, chunks[cid].path) > 0]
        by_path = self.matcher().by_path
        found: list[str] = []
        for cid in views:
            for path, start, end in rank.citations(chunks[cid].text):
                found.extend(u.id for u in by_path.get(path, ()) if u.start <= end and start <= u.end)
        found = list(dict.fromkeys(found))
        chunks.update(self.lexical.chunks([cid for cid in found if cid not in chunks]))
        return found

    def _preludes(self, chunks: dict[str, Chunk]) -> dict[str, str]:
        """Path -> prelude unit id of the candidates' parsed modules (added to ``chunks``)."""
        matcher = self.matcher()
        found = {path: cid for path in sorted({c.path for c in chunks.values()})
                 if (cid := matcher.prelude(path))}
        chunks.update(self.lexical.chunks([cid for cid in found.values() if cid not in chunks]))
        return found

    def _expanded(self, ranked: list[tuple[str, float]], chunks: dict[str, Chunk],
                  bm25: dict[str, float], embedding: list[float] | None) -> list[tuple[str, float]]:
        """The ranking with the other units of its best files joined in (their chunks added
        to ``chunks``), ordered by the query's BM25 (``bm25``: the lexical pool's scores) and
        vector similarity over them."""
        if rank.EXPAND_SHARE <= 0:
            return ranked
        by_path = self.matcher().by_path
        units = {path: [(u.id, u.start, u.end) for u in by_path.get(path, [])]
                 for path in files_in_order(ranked, chunks, rank.EXPAND_FILES)}
        ids = [cid for found in units.values() for cid, _, _ in found]
        chunks.update(self.lexical.chunks([cid for cid in ids if cid not in chunks]))
        signals = [{cid: bm25[cid] for cid in ids if cid in bm25}]
        exact = self._exact[1] if self._exact is not None else None
        if embedding is not None and exact is not None:
            signals.append(exact.similarities(embedding, ids))
        return expand(ranked, chunks, units, signals)

    def matcher(self) -> Matcher:
        """What reads the query's mentions and finds their chunks (built on first use)."""
        if self._matcher is None:
            self._matcher = Matcher(self.facts, self.lexical, self.scripts)
        return self._matcher

    def _exact_vectors(self) -> ExactVectors | None:
        """The snapshot the index names, read once; else the store's vectors; else None,
        and retrieval is lexical from then on, saying why."""
        assert self.embedder is not None and self.vectors is not None
        digest = self.lexical.meta("vectors")
        if self._exact is None or self._exact[0] != digest:
            found = load_snapshot(self.index_dir, digest)
            if found is None:
                try:
                    found = read_store(self.vectors, self.embedder.model_id)
                except VectorStoreError as exc:
                    self.embedder = self.vectors = None
                    self.note = exc.message
                    return None
            self._exact = (digest, found)
        return self._exact[1]

    def close(self) -> None:
        self.lexical.close()

    @property
    def mode(self) -> str:
        return "hybrid" if self.embedder is not None else "lexical"

    def fingerprint(self, profile: Profile, budget: int, query: str,
                    exclude: frozenset[str] = frozenset()) -> str:
        chosen: list[object] = [] if profile.view_kinds == VIEW_KINDS else [list(profile.view_kinds)]
        chosen += [profile.cited] if profile.cited else []
        if self.has_knowledge:
            chosen += [profile.weight("knowledge", "knowledge"), sorted(exclude)]
        key = json.dumps([self.state, self.mode, profile.name, budget, query, profile.graph,
                          profile.code, profile.tests, profile.docs, profile.views, *chosen])
        return hashlib.sha256(key.encode()).hexdigest()[:16]

    def _knowledge_ids(self) -> frozenset[str]:
        """The chunks of knowledge documents: searched beside the code, never in its pools."""
        if self._knowledge is None:
            self._knowledge = frozenset(self.lexical.chunk_ids_under(KNOWLEDGE_PREFIX)) \
                if self.has_knowledge else frozenset()
        return self._knowledge

    def search(self, query: str, profile: Profile) -> Ranking:
        # Team knowledge is ranked as a corpus of its own and joined after fusion: its chunks never
        # take a place in the code's fixed-size pools, so configuring it cannot move the code's ranking.
        knowledge = self._knowledge_ids()
        size = LEXICAL_POOL if rank.EXPAND_SHARE > 0 else CANDIDATES
        found = self.lexical.search(query, size + len(knowledge))
        pool = [hit for hit in found if hit[0] not in knowledge][:size]
        known = [hit for hit in found if hit[0] in knowledge][:CANDIDATES]
        scored = pool[:CANDIDATES]  # the same hits, in the same order, as a search for CANDIDATES
        lexical = [cid for cid, _ in scored]
        vector: list[str] = []
        known_vector: list[str] = []
        best_similarity = -1.0
        embedding: list[float] | None = None
        if self.embedder is not None and self.vectors is not None:
            exact = self._exact_vectors()
            if exact is not None:
                embedding = self._query_vector(query)
                extra = exact.count_of(knowledge) if knowledge else 0
                hits = exact.search(embedding, VECTOR_UNITS + extra)
                code_hits = [h for h in hits if h.chunk not in knowledge][:VECTOR_UNITS]
                best = best_by_chunk([(h.chunk, h.similarity) for h in code_hits])
                vector = [cid for cid, _ in sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))][:CANDIDATES]
                best_similarity = max(best.values(), default=-1.0)
                closest = best_by_chunk([(h.chunk, h.similarity) for h in hits if h.chunk in knowledge])
                known_vector = [cid for cid, _ in sorted(closest.items(), key=lambda kv: (-kv[1], kv[0]))]
        seen = set(lexical)
        matched = self.matcher().match(query, lexical + [cid for cid in vector if cid not in seen])
        extra_ids = {cid for cid, _ in known} | set(known_vector)
        chunks = self.lexical.chunks(sorted(seen | set(vector) | set(matched.ids) | extra_ids))
        fused = fuse(scored, vector, matched.ids, chunks)
        # The graph's seeds and the views' citations come from the code's ranking alone.
        near = self._near(seeds(fused, matched.ids), chunks) if profile.graph > 0 else []
        cited = self._cited(fused, chunks, profile) if rank.CITED_WEIGHT * profile.cited > 0 else []
        if extra_ids:
            fused = {**fused, **fuse(known, known_vector, [], chunks)}
        if len(self._keys) > KEPT_KEYS:
            self._keys.clear()
        ranked = finish(fused, near, chunks, profile, self.graph, self._preludes(chunks), cited, self._keys,
                        matched.paths)
        ranked = self._expanded(ranked, chunks, dict(pool), embedding)
        evidence = Evidence(len(lexical), best_similarity, tuple(score for _, score in ranked[:10]))
        return Ranking(ranked, chunks, evidence, tuple(matched.described))

    def retrieve(self, query: str, profile: Profile, budget: int | None = None,
                 exclude: frozenset[str] = frozenset()) -> Slice:
        """The slice; ``exclude`` names documents (knowledge outside the scopes asked for) that
        may not be in it."""
        budget = profile.budget if budget is None else budget
        if budget < 1:
            raise KbcError(f"budget {budget} is too small", hint="give a budget of 1 token or more")
        found = without(self.search(query, profile), exclude)
        self.last_evidence = found.evidence
        return self.slice_of(found, query, profile, budget, exclude)

    def slice_of(self, found: Ranking, query: str, profile: Profile, budget: int,
                 exclude: frozenset[str] = frozenset()) -> Slice:
        """``found`` packed into ``budget`` tokens (one search serves several budgets)."""
        ranked, chunks = found.ranked, found.chunks
        mode = self.mode
        note = f" ({self.note})" if self.note and mode == "lexical" else ""
        header = (f"# kbc slice · {profile.name} · budget {budget} tokens · retrieval: {mode}"
                  f"{note}\n")
        smallest = self.counter.count(header)
        if smallest > budget:
            # not even the header fits: a cut header would pass for a slice with nothing in it
            raise KbcError(f"budget {budget} is smaller than a slice's header ({smallest} tokens)",
                           hint=f"give a budget of at least {smallest} tokens (a useful slice needs "
                                "a few hundred or more)")
        ranked = rank.spread(ranked, chunks, budget=budget)
        # Chunks carry the token counts taken when they were indexed.
        packed = pack([chunks[cid] for cid, _ in ranked], self.dates, budget, self.counter, header,
                      lambda chunk: chunk.tokens, [score for _, score in ranked])
        items = tuple(SliceItem(b.chunks[0], b.path, b.start, b.end, b.kind, b.score, b.tokens)
                      for b in packed.blocks)
        return Slice(profile.name, budget, packed.tokens, self.fingerprint(profile, budget, query, exclude),
                     mode, items, packed.text, self.note, found.matched)
