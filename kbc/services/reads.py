"""What the knowledge base's plain reads return: a search's hits, the knowledge scopes and a
file's lines, serialised for every way in by :mod:`kbc.services.payloads`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from kbc.domain.models import Chunk


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchHit:
    id: str
    path: str
    start_line: int
    end_line: int
    kind: str
    score: float
    heading: str
    symbols: tuple[str, ...]
    text: str
    repository: str = ""  # the repository it came from, in a search across several
    tokens: int = 0  # of its text, as counted when indexed (0: not counted)


@dataclass(frozen=True, slots=True, kw_only=True)
class ScopeSummary:
    scope: str
    documents: int
    roots: tuple[str, ...]
    default: bool  # read by a request that names no scope


@dataclass(frozen=True, slots=True, kw_only=True)
class FileLines:
    path: str
    start_line: int
    end_line: int
    lines: int  # in the whole file
    text: str
    truncated: bool | None = None  # with a budget: whether lines were left out (None: no budget)


def hits_of(ranked: Sequence[tuple[str, float]], chunks: Mapping[str, Chunk], k: int) -> list[SearchHit]:
    """The first ``k`` (at least one) of a ranking as hits."""
    return [
        SearchHit(
            id=chunk.id,
            path=chunk.path,
            start_line=chunk.start_line,
            end_line=chunk.end_line,
            kind=chunk.kind,
            score=score,
            heading=chunk.heading,
            symbols=chunk.symbols,
            text=chunk.text,
            tokens=chunk.tokens,
        )
        for chunk, score in ((chunks[cid], score) for cid, score in ranked[: max(1, k)])
    ]


def within(hits: Sequence[SearchHit], budget: int | None, count: Callable[[str], int]) -> list[SearchHit]:
    """As many of ``hits``, in order, as their texts fit in ``budget`` tokens (all without one)."""
    if budget is None:
        return list(hits)
    kept: list[SearchHit] = []
    spent = 0
    for hit in hits:
        spent += hit.tokens or count(hit.text)
        if spent > budget:
            break
        kept.append(hit)
    return kept
