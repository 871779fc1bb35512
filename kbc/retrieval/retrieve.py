"""Retrieve a precision slice: search, fuse, boost, pack, render.

A :class:`Retriever` opens the indexes once and answers many requests (the
CLI makes one; a server keeps one). The same index state and the same request
give byte-identical output.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path

from kbc.domain.errors import KbcError
from kbc.domain.models import KNOWLEDGE_PREFIX, FileFacts, GraphFacts
from kbc.domain.views import VIEW_KINDS
from kbc.index.embed import Embedder
from kbc.index.lexical import LexicalIndex
from kbc.index.tokencount import TokenCounter
from kbc.index.vectors import VectorStore
from kbc.retrieval import rank, report
from kbc.retrieval.around import cited_units, expanded, near_units, preludes
from kbc.retrieval.copies import Copies, prefer_originals
from kbc.retrieval.corpora import MergeRow, merge_ranking
from kbc.retrieval.evidence import evidence_of
from kbc.retrieval.features import (
    Repository,
    Signals,
    query_features,
    repository_of,
    unit_features,
)
from kbc.retrieval.matched import Matcher
from kbc.retrieval.model import Ranker, shipped_models
from kbc.retrieval.modelled import candidate_paths, file_probabilities, modelled
from kbc.retrieval.neighbours import SymbolNeighbours
from kbc.retrieval.notes import NoteStatistics
from kbc.retrieval.pack import pack
from kbc.retrieval.precedent import MIN_PRECEDENTS, Precedents
from kbc.retrieval.profiles import Profile
from kbc.retrieval.query import bounded
from kbc.retrieval.rank import FileGraph, finish, fuse, nearest_units, seeds
from kbc.retrieval.report import clean_report
from kbc.retrieval.rerank import Reranking
from kbc.retrieval.results import Evidence, Ranking, Slice, without
from kbc.retrieval.shaping import Shaping
from kbc.retrieval.slicing import Titles, fingerprint_of, header, items_of, knowledge_left_out, pointers
from kbc.retrieval.vectorside import VectorSide
from kbc.store.layout import LEXICAL

CANDIDATES = 200  # hits taken from each search before fusion
LEXICAL_POOL = 2000  # BM25 hits kept to order the other units of the best files (about as fast)
VECTOR_UNITS = 300  # unit hits asked of the vector store (several per chunk)
# Team notes searched in their own statistics (kbc.retrieval.notes; False: in the whole index's,
# beside the code). The merge is fitted on it (RESULTS.md, "Team notes searched in their own ...").
NOTES_OWN_SEARCH = True
KEPT_KEYS = 50_000  # chunks' duplicate-comparison texts kept between searches


class Retriever:
    def __init__(  # noqa: PLR0913 - what a store holds for retrieval, opened once by open_retriever
        self,
        index_dir: Path,
        graph: GraphFacts | None,
        module_paths: dict[str, str],
        symbol_paths: dict[str, str],
        counter: TokenCounter,
        embedder: Embedder | None = None,
        vectors: VectorStore | None = None,
        note: str = "",
        facts: Sequence[FileFacts] = (),
        scripts: Sequence[str] = (),
        cochange: Mapping[tuple[str, str], float] | None = None,
    ) -> None:
        self.index_dir = index_dir
        path = index_dir / LEXICAL
        if not path.is_file():
            raise KbcError(f"no index at {index_dir}", hint="run `kbc build` on the repository first")
        self.lexical = LexicalIndex(path)
        if self.lexical.stale:
            self.lexical.close()
            raise KbcError(
                f"the index at {index_dir} was written by another kbc version",
                hint="run `kbc build` to bring it up to date",
            )
        self.lexical.pin()
        self.dates = {p: r.date for p, r in self.lexical.files().items()}
        self.titles = Titles(self.dates)  # how each file is dated in a slice's titles
        self.knowledge_order: Mapping[str, int] = {}  # knowledge document -> its place (by scope)
        self.has_knowledge = any(p.startswith(KNOWLEDGE_PREFIX) for p in self.dates)
        self.state = self.lexical.meta("state")
        self.side = VectorSide(index_dir, self.lexical, self.state, embedder, vectors, note)
        self.graph = FileGraph.from_facts(graph, module_paths, symbol_paths, cochange) if graph else None
        self.counter = counter
        self.last_evidence = Evidence(
            lexical_hits=0, best_similarity=-1.0, scores=()
        )  # of the last retrieve, for the gap log
        self.facts = facts
        self.scripts = scripts  # the console scripts the packaging metadata declares
        self._matcher: Matcher | None = None
        self._graph_facts = graph
        self._neighbours: SymbolNeighbours | None = None
        self._knowledge: frozenset[str] | None = None
        self._keys: dict[str, str] = {}  # chunk id -> its text as compared for duplicates
        self.module_paths = module_paths
        self._repository: Repository | None = None
        self._precedents: Precedents | None = None
        self.confidence_floor: float | None = None  # None: the shipped model's floor
        self.reranking: Reranking | None = None  # re-orders the first candidates (retrieval.rerank_model)
        self.last_merge: list[MergeRow] = []  # the last merge's rows (for the benchmarks that fit it)
        self.last_weights: dict[str, float] = {}  # and its candidates' role weights
        self._merge_rows: dict[str, MergeRow] = {}
        self._shaping: Shaping | None = None
        self.last_confidence: list[float] = []  # the last confidence's features

    @property
    def embedder(self) -> Embedder | None:
        return self.side.embedder

    @property
    def vectors(self) -> VectorStore | None:
        return self.side.vectors

    @property
    def note(self) -> str:
        return self.side.note

    @property
    def waiting(self) -> str:
        return self.side.waiting

    def current_note(self) -> str:
        return self.side.current_note()

    def _neighbours_of(self) -> SymbolNeighbours | None:
        """The definitions around each definition (built on first use); None without facts."""
        if self._graph_facts is None or not self.facts:
            return None
        if self._neighbours is None:
            self._neighbours = SymbolNeighbours(self._graph_facts, self.facts, self.matcher().lookup.table)
        return self._neighbours

    def matcher(self) -> Matcher:
        """What reads the query's mentions and finds their chunks (built on first use)."""
        if self._matcher is None:
            self._matcher = Matcher(self.facts, self.lexical, self.scripts)
        return self._matcher

    def precedents(self) -> Precedents:
        """The latest commits as the build read them (read on first use)."""
        if self._precedents is None:
            self._precedents = Precedents(self.lexical.precedents())
        return self._precedents

    def close(self) -> None:
        self.lexical.close()
        if self.reranking is not None:
            self.reranking.close()

    @property
    def mode(self) -> str:
        return self.side.mode

    def fingerprint(
        self,
        profile: Profile,
        budget: int,
        query: str,
        exclude: frozenset[str] = frozenset(),
        min_confidence: float | None = None,
    ) -> str:
        chosen: list[object] = [] if profile.view_kinds == VIEW_KINDS else [list(profile.view_kinds)]
        chosen += [profile.cited] if profile.cited else []
        if self.has_knowledge:
            chosen += [profile.weight("knowledge", "knowledge"), sorted(exclude)]
        chosen += [profile.incidental, profile.vendored, profile.config, profile.examples]
        chosen += [shipped_models().digest]  # its confidence is in every slice
        chosen += (
            [min_confidence, self.confidence_floor] if min_confidence != 0 or self.confidence_floor else []
        )
        chosen += [self.reranking.reranker.name] if self.reranking is not None else []
        return fingerprint_of(self.state, self.mode, profile, budget, query, chosen)

    def _knowledge_ids(self) -> frozenset[str]:
        """The chunks of knowledge documents: searched beside the code, never in its pools."""
        if self._knowledge is None:
            self._knowledge = (
                frozenset(self.lexical.chunk_ids_under(KNOWLEDGE_PREFIX))
                if self.has_knowledge
                else frozenset()
            )
        return self._knowledge

    @functools.cached_property
    def notes(self) -> NoteStatistics:
        """The team notes' own statistics (read on first use)."""
        return NoteStatistics(self.lexical.chunks(sorted(self._knowledge_ids())).values())

    def signals(self, query: str, profile: Profile) -> Signals:
        """What the searches find for ``query`` before any weighing (the code's; team knowledge
        is searched apart, by :meth:`search`)."""
        return self._gather(query, profile)[0]

    def _gather(self, query: str, profile: Profile) -> tuple[Signals, Signals | None, list[float] | None]:
        """The code's signals, team knowledge's (None when there is none) and the query's
        embedding (None when lexical)."""
        # Team knowledge is ranked as a corpus of its own: its chunks never take a place in the
        # code's fixed-size pools, so configuring it cannot move the code's ranking.
        knowledge = self._knowledge_ids()
        query = bounded(query)  # no reader of a task, nor the searches, sees more of it than this
        text = clean_report(query) if report.CLEAN else query  # what the searches read
        found = self.lexical.search(text, LEXICAL_POOL + len(knowledge))
        pool = [hit for hit in found if hit[0] not in knowledge][:LEXICAL_POOL]
        known = [hit for hit in found if hit[0] in knowledge][:CANDIDATES]
        if NOTES_OWN_SEARCH and knowledge:  # ranked within themselves, not in the code's statistics
            known = self.notes.search(text, CANDIDATES)
        scored = pool[:CANDIDATES]  # the same hits, in the same order, as a search for CANDIDATES
        lexical = [cid for cid, _ in scored]
        hits = self.side.hits(text, knowledge, VECTOR_UNITS, CANDIDATES)
        vector, similarity, embedding = hits.vector, hits.similarity, hits.embedding
        known_vector, known_similarity = hits.known_vector, hits.known_similarity
        seen = set(lexical)
        matched = self.matcher().match(query, lexical + [cid for cid in vector if cid not in seen])
        extra_ids = {cid for cid, _ in known} | set(known_vector)
        chunks = self.lexical.chunks(sorted(seen | set(vector) | set(matched.ids) | extra_ids))
        history = self.precedents()
        precedent = history.credit(text) if len(history) >= MIN_PRECEDENTS else None
        fused = fuse(scored, vector, matched.ids, chunks, precedent)
        # The graph's seeds and the views' citations come from the code's ranking alone.
        neighbours = self._neighbours_of() if profile.graph > 0 else None
        near = (
            near_units(seeds(fused, matched.ids), chunks, neighbours, self.matcher(), self.lexical.chunks)
            if neighbours is not None
            else []
        )
        cited = (
            cited_units(fused, chunks, profile, text, self.matcher().by_path, self.lexical.chunks)
            if rank.CITED_WEIGHT * profile.cited > 0
            else []
        )
        lift = rank.lift_of(fused, chunks, profile, self.graph, matched.paths)
        code = Signals(
            query=text,
            lexical=scored,
            pool=dict(pool),
            vector=vector,
            similarity=similarity,
            matched=matched.ids,
            matched_kinds=matched.kinds,
            near=near,
            cited=cited,
            lift=lift,
            chunks=chunks,
            named=matched.paths,
            described=tuple(matched.described),
            precedent=precedent,
            missed=matched.missed,
        )
        team = (
            Signals(
                query=text,
                lexical=known,
                pool=dict(known),
                vector=known_vector,
                similarity=known_similarity,
                matched=[],
                matched_kinds={},
                near=[],
                cited=[],
                lift={},
                chunks=chunks,
            )
            if extra_ids
            else None
        )
        return code, team, embedding

    def repository(self) -> Repository:
        """What the ranking model reads of the repository (built on first use)."""
        if self._repository is None:
            self._repository = repository_of(
                self.matcher().by_path, self._graph_facts, self.module_paths, self.dates
            )
        return self._repository

    def query_row(self, signals: Signals) -> list[float]:
        """The query's own features (:data:`kbc.retrieval.features.QUERY_FEATURES`)."""
        frequencies, total = self.lexical.frequencies(signals.query)
        return query_features(signals, frequencies, total)

    def candidate_paths(self, signals: Signals) -> list[str]:
        return candidate_paths(signals)

    def _modelled(
        self,
        signals: Signals,
        profile: Profile,
        ranker: Ranker,
        embedding: list[float] | None,
        unit_files: int,
    ) -> tuple[dict[str, float], list[float]]:
        """Scores by the fitted model (:func:`kbc.retrieval.modelled.modelled`)."""
        rows = functools.partial(self.unit_rows, embedding=embedding)
        return modelled(signals, profile, ranker, self.repository(), rows, self.lexical.chunks, unit_files)

    def unit_rows(
        self, signals: Signals, path: str, embedding: list[float] | None = None
    ) -> tuple[list[str], list[list[float]]]:
        """The ids of every unit of ``path`` (their chunks added to the signals') and their rows
        of unit features."""
        found = [c for c in signals.chunks.values() if c.path == path]
        units = nearest_units(
            self.repository().units.get(path, ()),
            [(c.start_line, c.end_line) for c in found],
            {c.id for c in found},
        )
        ids = [u[0] for u in units]
        signals.chunks.update(self.lexical.chunks([cid for cid in ids if cid not in signals.chunks]))
        similarity: dict[str, float] = {}
        exact = self.side.loaded()
        if embedding is not None and exact is not None:
            similarity = exact.similarities(embedding, ids)
        return ids, unit_features(signals, path, units, signals.chunks, similarity)

    def _merged(
        self,
        ranked: list[tuple[str, float]],
        signals: Signals,
        embedding: list[float] | None,
        profile: Profile,
        ranker: Ranker,
    ) -> list[tuple[str, float]]:
        """``ranked`` merged across corpora on calibrated scores (:mod:`kbc.retrieval.corpora`)."""
        assert ranker.merge is not None
        exact = self.side.loaded()
        similar = functools.partial(exact.similarities, embedding) if embedding and exact else None
        found, self.last_merge, self.last_weights = merge_ranking(
            ranked, signals, self.lexical.coverage, similar, profile, ranker.merge, ranker.note_floor
        )
        self._merge_rows = {r.id: r for r in self.last_merge}
        return found

    def copies(self) -> Copies:
        """The repository's copies of its own definitions (found on first use)."""
        return self.shaping().copies()

    def shaping(self) -> Shaping:
        """What shapes a slice besides its ranking (read on first use)."""
        if self._shaping is None:
            self._shaping = Shaping(self.facts, self.lexical, self.matcher, lambda: self.repository().fan_in)
        return self._shaping

    def mark_behind(self, notes: Mapping[str, str]) -> None:
        """Say in a slice's titles which documents are behind the code, and why."""
        self.titles.mark_behind(notes)

    def search(self, query: str, profile: Profile) -> Ranking:
        self.last_merge, self._merge_rows, self.last_confidence = [], {}, []
        code, team, embedding = self._gather(query, profile)
        chunks = code.chunks
        if len(self._keys) > KEPT_KEYS:
            self._keys.clear()
        ranker = shipped_models().for_mode(self.mode)
        files: list[float] | None = None  # the file model's probabilities of the candidate files
        if rank.MODEL:
            scored, files = self._modelled(code, profile, ranker, embedding, rank.UNIT_FILES)
            if team is not None:
                scored.update(self._modelled(team, profile, ranker, embedding, 0)[0])
            ordered = sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))
            ranked = rank.drop_duplicates(ordered, chunks, self._keys)
        else:
            fused = fuse(code.lexical, code.vector, code.matched, chunks, code.precedent)
            if team is not None:
                fused = {**fused, **fuse(team.lexical, team.vector, [], chunks)}
            ranked = finish(
                fused,
                code.near,
                chunks,
                profile,
                self.graph,
                preludes(chunks, self.matcher(), self.lexical.chunks),
                code.cited,
                self._keys,
                code.named,
            )
            exact = self.side.loaded()
            similar = None
            if embedding is not None and exact is not None:
                similar = functools.partial(exact.similarities, embedding)
            ranked, originals = prefer_originals(
                ranked, chunks, self.copies(), self.matcher().by_path, self.lexical.chunks
            )
            chunks.update(originals)
            ranked = expanded(ranked, chunks, code.pool, similar, self.matcher().by_path, self.lexical.chunks)
            if rank.MERGE and ranker.merge is not None:
                ranked = self._merged(ranked, code, embedding, profile, ranker)
        modelled_files = files  # read by the confidence when it needs them (mypy: not narrowed in a lambda)
        evidence, self.last_confidence = evidence_of(
            ranker,
            ranked,
            code,
            team,
            self._merge_rows.get(ranked[0][0]) if ranked else None,
            lambda: self.query_row(code),
            lambda: (
                modelled_files
                if modelled_files is not None
                else file_probabilities(code, ranker, self.repository())
            ),
            self.confidence_floor,
            len(self.matcher().by_path),
        )
        found = Ranking(ranked, chunks, evidence, code.described)
        return found if self.reranking is None else self.reranking.apply(bounded(query), found)

    def retrieve(
        self,
        query: str,
        profile: Profile,
        budget: int | None = None,
        exclude: frozenset[str] = frozenset(),
        min_confidence: float | None = None,
    ) -> Slice:
        """The slice; ``exclude`` names documents (knowledge outside the scopes asked for) that
        may not be in it; a confidence below ``min_confidence`` (None: the confidence floor)
        gives a slice with nothing packed but pointers to the nearest matches."""
        budget = profile.budget if budget is None else budget
        if budget < 1:
            raise KbcError(f"budget {budget} is too small", hint="give a budget of 1 token or more")
        found = without(self.search(query, profile), exclude)
        self.last_evidence = found.evidence
        return self.slice_of(found, query, profile, budget, exclude, min_confidence)

    def slice_of(
        self,
        found: Ranking,
        query: str,
        profile: Profile,
        budget: int,
        exclude: frozenset[str] = frozenset(),
        min_confidence: float | None = None,
    ) -> Slice:
        """``found`` packed into ``budget`` tokens (one search serves several budgets); below
        ``min_confidence`` (None: the confidence floor) nothing is packed: the header says so
        and points at the nearest matches."""
        ranked = found.ranked
        mode = self.mode
        said_note = self.current_note()
        confidence = found.evidence.confidence
        head = header(
            profile.name,
            budget,
            mode,
            said_note,
            found.evidence,
            found.rerank,
            min_confidence,
            pointers(found),
        )
        if found.evidence.low_confidence if min_confidence is None else 0 <= confidence < min_confidence:
            ranked = []
        smallest = self.counter.count(head)
        if smallest > budget:
            # not even the header fits: a cut header would pass for a slice with nothing in it
            raise KbcError(
                f"budget {budget} is smaller than a slice's header ({smallest} tokens)",
                hint=f"give a budget of at least {smallest} tokens (a useful slice needs "
                "a few hundred or more)",
            )
        order, scores = self.shaping().packing_order(ranked, found.chunks, budget, query, self.counter.count)
        packed = pack(
            order,
            self.titles.labels,
            budget,
            self.counter,
            head,
            lambda chunk: chunk.tokens,
            scores,
            self.knowledge_order,
            self.shaping().extent,
            self.shaping().lines_near,
        )
        fingerprint = self.fingerprint(profile, budget, query, exclude, min_confidence)
        left_out = knowledge_left_out(order, packed)
        return Slice(
            use_case=profile.name,
            budget=budget,
            tokens=packed.tokens,
            fingerprint=fingerprint,
            retrieval=mode,
            items=items_of(packed, self.titles),
            text=packed.text,
            note=said_note,
            matched=found.matched,
            confidence=confidence,
            low_confidence=found.evidence.low_confidence,
            relevance=found.evidence.relevance,
            knowledge_left_out=left_out,
            rerank=found.rerank,
        )
