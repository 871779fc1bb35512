"""What a retrieval answers: the ranking with its evidence, and the packed slice."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kbc.domain.models import Chunk

RERANKED = "reranked by "  # how a reranked ranking's note starts


@dataclass(frozen=True, slots=True, kw_only=True)
class Evidence:
    """How strongly the indexes answered a query, for the knowledge-gap log."""

    lexical_hits: int  # chunks that matched a query term
    best_similarity: float  # cosine similarity of the best embedded unit (-1 when lexical only)
    scores: tuple[float, ...]  # fused scores of the top ten, best first
    confidence: float = -1.0  # that the first document is what the task needs (-1: not estimated)
    # nothing relevant: the relevance (that the repository answers the task at all) below its
    # floor; without a relevance model, the confidence below the floor
    low_confidence: bool = False
    floor: float = -1.0  # the floor the relevance (else the confidence) is read against (-1: none)
    relevance: float = -1.0  # that the repository answers the task at all (-1: not estimated)
    held: float = -1.0  # the share of the task's distinct words the repository holds (-1: not read)
    # How well team knowledge answered: its best unit's similarity (-1: lexical, or none) and the
    # share of the query's words its best lexical hit holds (0 when none matched).
    knowledge_similarity: float = -1.0
    knowledge_coverage: float = 0.0


@dataclass(frozen=True, slots=True)
class Ranking:
    ranked: list[tuple[str, float]]  # (chunk id, fused score), best first
    chunks: dict[str, Chunk]
    evidence: Evidence
    matched: tuple[dict[str, Any], ...] = ()  # what the query named and what it matched
    rerank: str = ""  # with a reranker configured: whether it re-ordered the ranking, and why not

    @property
    def reranked(self) -> bool:
        return self.rerank.startswith(RERANKED)


@dataclass(frozen=True, slots=True, kw_only=True)
class SliceItem:
    id: str
    path: str
    start_line: int
    end_line: int
    kind: str
    score: float
    tokens: int
    # a document's (team knowledge's, or the repository's docs): how it is dated ("last commit
    # YYYY-MM-DD", "modified YYYY-MM-DD") and, when behind the code, why; "" for code
    date: str = ""
    behind: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
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
    confidence: float = -1.0  # that its first document is what the task needs (-1: not estimated)
    low_confidence: bool = False  # nothing relevant: below the floor
    relevance: float = -1.0  # that the repository answers the task at all (-1: not estimated)
    knowledge_left_out: int = 0  # team-knowledge sections ranked among the first but not packed
    rerank: str = ""  # "" without a reranker; else "reranked by M (N candidates)" or why not

    @property
    def reranked(self) -> bool:
        return self.rerank.startswith(RERANKED)

    def to_json(self) -> str:
        data: dict[str, Any] = {
            "use_case": self.use_case,
            "budget": self.budget,
            "tokens": self.tokens,
            "fingerprint": self.fingerprint,
            "retrieval": self.retrieval,
            "note": self.note,
            "confidence": round(self.confidence, 3),
            "low_confidence": self.low_confidence,
            **({"relevance": round(self.relevance, 3)} if self.relevance >= 0 else {}),
            "matched": list(self.matched),
            **({"reranked": self.reranked, "rerank": self.rerank} if self.rerank else {}),
            "items": [item_data(i) for i in self.items],
            "text": self.text,
        }
        return json.dumps(data, indent=1, ensure_ascii=False)


def item_data(item: SliceItem) -> dict[str, Any]:
    """An item as the JSON of a slice gives it."""
    data: dict[str, Any] = {
        "id": item.id,
        "path": item.path,
        "start_line": item.start_line,
        "end_line": item.end_line,
        "kind": item.kind,
        "score": round(item.score, 8),
        "tokens": item.tokens,
    }
    if item.date:
        data["date"] = item.date
    if item.behind:
        data["behind"] = item.behind
    return data


def without(found: Ranking, exclude: frozenset[str]) -> Ranking:
    """``found`` without the chunks of the documents in ``exclude``."""
    if not exclude:
        return found
    kept = [(cid, score) for cid, score in found.ranked if found.chunks[cid].path not in exclude]
    return Ranking(kept, found.chunks, found.evidence, found.matched, found.rerank)
