"""One ranking across corpora: code, tests, docs, views and team knowledge, each ranked within
itself, merged on calibrated scores.

The fusion ranks every candidate, but its scores are sums of reciprocal ranks: they say how a
candidate stands against the others of its list, not how likely it is to be what the task
needs, so a profile's role weight multiplying them is a rank penalty of unknown size (at 0.5 a
team note that holds every word of the question ranked below the sixtieth code hit). Here each
candidate gets a probability from evidence that means the same in every corpus: the
rarity-weighted share of the query's words it holds (:meth:`LexicalIndex.coverage`), how far
that is from the best candidate's, its place in its own corpus, its vector similarity and how
far that is from the best, whether the task names it, the query's length, and whether it is a
team note (and that with the query's length: a note answers a short question, rarely a long
report), read by a logistic regression fitted on questions of every shape (``ranker.json``'s
``merge``; ``benchmarks/fit_merge.py``).

Within a corpus the fusion's order is kept: the probabilities along it are made non-increasing
by least squares (an item more likely than those ranked above it shares its probability with
them: the corpus's own order is trusted). A profile's role weight then multiplies the odds, a prior
that nudges and never buries. The merged scores are probabilities, so rankings of different
repositories can be merged on them too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kbc.domain.models import OUTSIDE_KINDS, Chunk
from kbc.index.tokens import tokens
from kbc.retrieval.features import Signals, confidence_features
from kbc.retrieval.model import Linear
from kbc.retrieval.profiles import Profile
from kbc.retrieval.rank import weight_of

CORPORA = ("code", "tests", "docs", "views", "knowledge")
# The corpora ranked apart and merged on calibrated scores; the others stay one corpus, the
# repository's files, ranked by the fusion with their roles' weights (tests and docs ranked
# apart lost the development split 11 points of Acc@5: an issue's words are a test's words).
APART = frozenset({"views", "knowledge"})
# The corpora ordered by the merge's own probabilities rather than by the fusion: team notes,
# whose fusion is BM25 over sections alone (a section holding every word of the question
# outranks one that repeats a few of them).
BY_PROBABILITY = frozenset({"knowledge"})
# True: the note floor is read of a question's best note, and a question some note answers
# merges all its notes on their probabilities; False: each note below the floor follows the
# repository's candidates (the floor was fitted on the best note of each question).
NOTES_TOGETHER = True
VIEWS_APART = False  # True: views ranked apart too (on the development split it cost 9 points of 13k HunkAll)


def corpus_of(chunk: Chunk) -> str:
    """The corpus a chunk is ranked in: team knowledge, views, or the repository's files (code,
    tests, documents, configuration, examples), unless those are ranked apart (``APART``)."""
    if chunk.kind == "knowledge":
        fine = "knowledge"
    elif chunk.kind == "view":
        fine = "views"
    elif chunk.role == "test":
        fine = "tests"
    elif chunk.role == "doc":
        fine = "docs"
    else:
        fine = "code"
    return fine if fine in APART and (fine != "views" or VIEWS_APART) else "repository"


@dataclass(frozen=True, slots=True)
class MergeRow:
    """One candidate as the merge reads it."""

    id: str
    corpus: str
    rank: int  # in its corpus, from 1
    features: tuple[float, ...]  # of MERGE_FEATURES


def merge_rows(
    ranked: Sequence[tuple[str, float]],
    chunks: Mapping[str, Chunk],
    query: str,
    coverage: Mapping[str, float],
    similarity: Mapping[str, float] | None,
    named: frozenset[str],
) -> list[MergeRow]:
    """The merge's row of every ranked candidate (``similarity`` None: lexical retrieval; a
    candidate without a vector reads as unknown)."""
    best_coverage = max((coverage.get(cid, 0.0) for cid, _ in ranked), default=0.0)
    best_similarity = max(similarity.values(), default=math.nan) if similarity else math.nan
    terms = math.log1p(len(set(tokens(query))))
    places: dict[str, int] = {}
    rows = []
    for cid, _ in ranked:
        corpus = corpus_of(chunks[cid])
        place = places[corpus] = places.get(corpus, 0) + 1
        held = coverage.get(cid, 0.0)
        near = similarity.get(cid, math.nan) if similarity is not None else math.nan
        note = float(corpus == "knowledge")
        rows.append(
            MergeRow(
                cid,
                corpus,
                place,
                (
                    held,
                    held - best_coverage,
                    math.log(place),
                    near,
                    near - best_similarity,
                    float(cid in named),
                    terms,
                    note,
                    note * terms,
                ),
            )
        )
    return rows


def nudged(probability: float, weight: float) -> float:
    """``probability`` with its odds multiplied by ``weight`` (a prior; 1 leaves it)."""
    if weight == 1.0:
        return probability
    odds = probability * weight
    return odds / (odds + 1.0 - probability) if odds + 1.0 - probability > 0 else 1.0


def merged(
    rows: Sequence[MergeRow],
    chunks: Mapping[str, Chunk],
    model: Linear,
    weight: Mapping[str, float],
    note_floor: float = 0.0,
) -> list[tuple[str, float]]:
    """The candidates of ``rows`` (in the fusion's order) merged across corpora, best first
    (ties by the fusion's order), each with its calibrated score: its corpus's probabilities
    made non-increasing along the corpus's order (:func:`antitonic`), the odds times its
    role's ``weight`` (chunk id -> weight; 1 when absent). When no note is as likely as
    ``note_floor`` (no likely answer), the notes follow every other candidate."""
    probability = model.probabilities([list(r.features) for r in rows])
    score = [0.0] * len(rows)
    for corpus in {r.corpus for r in rows}:
        places = [i for i, r in enumerate(rows) if r.corpus == corpus]
        if corpus in BY_PROBABILITY:
            places.sort(key=lambda i: (-probability[i], i))
        for i, value in zip(places, antitonic([probability[i] for i in places]), strict=True):
            score[i] = value
    # The floor tells a question a note answers from one no note does, by its best note: below
    # it, every note follows the repository's candidates; at or above it, the notes are merged
    # on their probabilities like every other candidate.
    notes = [probability[i] for i, row in enumerate(rows) if row.corpus == "knowledge"]
    answered = NOTES_TOGETHER and max(notes, default=0.0) >= note_floor
    gated = (
        set()
        if answered
        else {i for i, row in enumerate(rows) if row.corpus == "knowledge" and probability[i] < note_floor}
    )
    keyed = [
        (i in gated, nudged(score[i], weight.get(row.id, 1.0)), i, row.id)
        for i, row in enumerate(rows)
        if row.id in chunks
    ]
    keyed.sort(key=lambda k: (k[0], -k[1], k[2]))
    lowest = min((value for held, value, _, _ in keyed if not held), default=1.0)
    return [(cid, min(value, lowest) if held else value) for held, value, _, cid in keyed]


def antitonic(values: Sequence[float]) -> list[float]:
    """The non-increasing sequence closest to ``values`` in least squares (pooling adjacent
    violators): a corpus's order kept, an item's probability shared with the ones it is ranked
    below when it is higher than theirs."""
    blocks: list[list[float]] = []  # [mean, count]
    for value in values:
        blocks.append([value, 1.0])
        while len(blocks) > 1 and blocks[-2][0] < blocks[-1][0]:
            mean, count = blocks.pop()
            blocks[-1][0] = (blocks[-1][0] * blocks[-1][1] + mean * count) / (blocks[-1][1] + count)
            blocks[-1][1] += count
    return [mean for mean, count in blocks for _ in range(int(count))]


def role_weights(
    ranked: Sequence[tuple[str, float]], chunks: Mapping[str, Chunk], profile: Profile, named: frozenset[str]
) -> dict[str, float]:
    """Each candidate's role weight in ``profile`` (a file the task names weighs as code)."""
    return {cid: weight_of(chunks[cid], profile, named) for cid, _ in ranked}


def merge_ranking(
    ranked: list[tuple[str, float]],
    signals: Signals,
    coverage: Callable[[str, list[str]], dict[str, float]],
    similar: Callable[[list[str]], dict[str, float]] | None,
    profile: Profile,
    model: Linear,
    note_floor: float = 0.0,
) -> tuple[list[tuple[str, float]], list[MergeRow], dict[str, float]]:
    """``ranked`` (the fusion's order) merged across corpora on calibrated scores, with the
    merge's rows and the role weights it read (``coverage(query, ids)``: the share of the query
    each candidate holds; ``similar(ids)``: their vector similarity, None when lexical)."""
    ids = [cid for cid, _ in ranked]
    held = coverage(signals.query, ids)
    near = similar(ids) if similar is not None else None
    rows = merge_rows(ranked, signals.chunks, signals.query, held, near, frozenset(signals.matched))
    weights = role_weights(ranked, signals.chunks, profile, signals.named)
    return merged(rows, signals.chunks, model, weights, note_floor), rows, weights


# The relevance model was fitted on repositories of dozens to thousands of files, and reads a
# clear match in a repository of a few files as foreign (its file model is sure of nothing
# there). In a repository with fewer than SMALL_REPOSITORY files of code, a slice is withheld
# ("nothing relevant") only while the repository also misses most of the task's words (it holds
# less than HELD_AT_MOST of them).
SMALL_REPOSITORY = 20
HELD_AT_MOST = 0.5


def nothing_relevant(relevance: float, confidence: float, floor: float, held: float, files: int) -> bool:
    """Whether a slice says "nothing relevant": its relevance (its confidence without a
    relevance model) below the floor, and in a repository of fewer than
    :data:`SMALL_REPOSITORY` code ``files``, less than :data:`HELD_AT_MOST` of the task's
    distinct words (``held``) found in it. A negative score is no score."""
    score = relevance if relevance >= 0 else confidence
    if not 0 <= score < floor:
        return False
    return files >= SMALL_REPOSITORY or held < HELD_AT_MOST


def confidence_of(
    model: Linear,
    query_row: Sequence[float],
    files: Sequence[float],
    ranked: Sequence[tuple[str, float]],
    first: MergeRow | None,
    described: Sequence[Mapping[str, Any]],
    missed: int = 0,
    first_kind: str = "code",
) -> tuple[float, list[float]]:
    """The slice's confidence (that its first document is right) and the row it was read from:
    ``first`` is the merge's row of the ranking's first item (None without a merge), and
    ``first_kind`` that item's kind (the file model reads no note nor view). A ranking
    with nothing in it (no word of the task matched) has no evidence, and no confidence."""
    top_item, top_coverage = math.nan, math.nan  # unknown without the merge
    if ranked and first is not None:
        top_item, top_coverage = ranked[0][1], first.features[0]
    elif not ranked:
        top_item, top_coverage = 0.0, 0.0
    row = confidence_features(
        query_row, files, top_item, top_coverage, described, missed, first_kind not in OUTSIDE_KINDS
    )
    return (model.probabilities([row])[0] if ranked else 0.0), row
