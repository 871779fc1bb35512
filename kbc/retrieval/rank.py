"""Ranking: reciprocal-rank fusion, profile weights, a graph boost, near-duplicate removal."""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kbc.domain.models import Chunk, GraphFacts
from kbc.retrieval.profiles import Profile

RRF_K = 60
SEEDS = 10  # the best fused hits whose graph neighbourhood is lifted
_SPACE = re.compile(r"\s+")


def rrf(rankings: Iterable[Sequence[str]], k: int = RRF_K) -> dict[str, float]:
    """Reciprocal-rank fusion: sum of 1 / (k + rank) over the rankings (rank from 1)."""
    fused: dict[str, float] = defaultdict(float)
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            fused[item] += 1.0 / (k + rank)
    return dict(fused)


@dataclass(frozen=True, slots=True)
class FileGraph:
    """Files linked by imports and calls, for query-personalised PageRank."""

    graph: Any  # networkx.Graph

    @classmethod
    def from_facts(cls, graph: GraphFacts, module_paths: Mapping[str, str],
                   symbol_paths: Mapping[str, str]) -> FileGraph:
        import networkx as nx

        weights: dict[tuple[str, str], float] = defaultdict(float)
        for edge in graph.import_edges:
            a, b = module_paths.get(edge.source), module_paths.get(edge.target)
            if a and b and a != b:
                weights[tuple(sorted((a, b)))] += 1.0  # type: ignore[index]
        for edge in graph.call_edges:
            a, b = edge.path, symbol_paths.get(edge.target)
            if a and b and a != b:
                weights[tuple(sorted((a, b)))] += 0.5 * len(edge.lines)  # type: ignore[index]
        files = nx.Graph()
        files.add_nodes_from(sorted(set(module_paths.values())))
        files.add_weighted_edges_from((a, b, w) for (a, b), w in sorted(weights.items()))
        return cls(files)

    def personalised(self, seeds: Mapping[str, float]) -> dict[str, float]:
        """PageRank personalised on ``seeds`` (path -> weight), scaled so the top is 1."""
        import networkx as nx

        present = {p: w for p, w in seeds.items() if p in self.graph and w > 0}
        if not present or self.graph.number_of_edges() == 0:
            return {}
        ranks = nx.pagerank(self.graph, alpha=0.85, personalization=present, weight="weight")
        top = max(ranks.values())
        return {p: r / top for p, r in ranks.items() if r > 0} if top > 0 else {}


def fingerprint_text(text: str) -> str:
    return hashlib.sha256(_SPACE.sub(" ", text).strip().encode()).hexdigest()


def rank(
    lexical: Sequence[str],
    vector: Sequence[str],
    chunks: Mapping[str, Chunk],
    profile: Profile,
    files: FileGraph | None,
) -> list[tuple[str, float]]:
    """Chunk ids with final scores, best first; deterministic (ties by id)."""
    fused = rrf([list(lexical), list(vector)])
    scored = {cid: score * profile.weight(chunks[cid].kind, chunks[cid].is_test)
              for cid, score in fused.items() if cid in chunks}
    if files is not None and profile.graph > 0 and scored:
        seeds: dict[str, float] = defaultdict(float)
        for cid, score in sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))[:SEEDS]:
            seeds[chunks[cid].path] += score
        lift = files.personalised(seeds)
        if lift:
            top = max(scored.values())
            scored = {cid: s + profile.graph * top * lift.get(chunks[cid].path, 0.0)
                      for cid, s in scored.items()}
    ordered = sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))
    return _drop_duplicates(ordered, chunks)


def _drop_duplicates(ordered: list[tuple[str, float]],
                     chunks: Mapping[str, Chunk]) -> list[tuple[str, float]]:
    """Keep the first of chunks whose text is the same but for white space."""
    seen: set[str] = set()
    kept = []
    for cid, score in ordered:
        key = fingerprint_text(chunks[cid].text)
        if key in seen:
            continue
        seen.add(key)
        kept.append((cid, score))
    return kept
