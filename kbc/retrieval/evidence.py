"""What a ranking says of itself: how sure it is of its first document (the confidence),
whether the repository answers the task at all (the relevance), and so whether its slice says
"nothing relevant" (:func:`kbc.retrieval.corpora.nothing_relevant`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kbc.retrieval.corpora import MergeRow, confidence_of, nothing_relevant
from kbc.retrieval.features import Signals, knowledge_evidence
from kbc.retrieval.model import Ranker
from kbc.retrieval.results import Evidence


def evidence_of(  # noqa: PLR0913 - a ranking and what its confidence reads, each read on demand
    ranker: Ranker,
    ranked: Sequence[tuple[str, float]],
    code: Signals,
    team: Signals | None,
    first: MergeRow | None,
    query_row: Callable[[], list[float]],
    files: Callable[[], list[float]],
    floor: float | None,
    code_files: int,
) -> tuple[Evidence, list[float]]:
    """The evidence of ``ranked`` and the row its confidence was read from (empty without a
    confidence model). ``first``: the merge's row of its first item; ``query_row`` and
    ``files``: the query's features and the file model's probabilities, read only when a
    confidence model reads them; ``floor``: the floor asked for (None: the model's);
    ``code_files``: how many files of code the repository has."""
    confidence, floor_read, relevance, held = -1.0, -1.0, -1.0, -1.0
    row: list[float] = []
    if ranker.confidence is not None:
        query = query_row()
        held = query[0]  # the share of the task's distinct words the repository holds
        kind = code.chunks[ranked[0][0]].kind if ranked else "code"
        confidence, row = confidence_of(
            ranker.confidence, query, files(), ranked, first, code.described, code.missed, kind
        )
        floor_read = ranker.floor if floor is None else floor
        if ranker.relevance is not None:
            relevance = ranker.relevance.probabilities([row])[0] if ranked else 0.0
    similarity, coverage = knowledge_evidence(team, code.chunks)
    evidence = Evidence(
        lexical_hits=len(code.lexical),
        best_similarity=max(code.similarity.values(), default=-1.0),
        scores=tuple(score for _, score in ranked[:10]),
        confidence=confidence,
        low_confidence=nothing_relevant(relevance, confidence, floor_read, held, code_files),
        floor=floor_read,
        relevance=relevance,
        held=held,
        knowledge_similarity=similarity,
        knowledge_coverage=coverage,
    )
    return evidence, row
