"""The merge across corpora: each corpus's own order kept, calibrated scores, priors that nudge."""

from kbc.domain.models import Chunk
from kbc.retrieval.corpora import corpus_of, merge_rows, merged, nothing_relevant, nudged
from kbc.retrieval.features import MERGE_FEATURES
from kbc.retrieval.model import Linear

# The probability rises with the share of the query a candidate holds and falls with its place.
MODEL = Linear(
    MERGE_FEATURES,
    mean=(0.0,) * len(MERGE_FEATURES),
    scale=(1.0,) * len(MERGE_FEATURES),
    weights=(6.0, 0.0, -0.5, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0),
    bias=-3.0,
)


def chunk(cid: str, path: str, kind: str = "code", role: str = "source") -> Chunk:
    return Chunk(cid, path, 1, 5, kind, "python" if kind == "code" else "markdown", "text\n", role=role)  # type: ignore[arg-type]


def test_team_knowledge_is_a_corpus_of_its_own_and_the_repository_another() -> None:
    assert corpus_of(chunk("k", "@knowledge/team/a.md", "knowledge", "domain")) == "knowledge"
    assert corpus_of(chunk("c", "a.py")) == "repository"
    assert corpus_of(chunk("t", "tests/test_a.py", role="test")) == "repository"
    assert corpus_of(chunk("v", "@views/module/a.md", "view", "module")) == "repository"


def test_a_note_holding_every_word_of_the_question_leads_though_its_prior_is_half() -> None:
    chunks = {
        "c1": chunk("c1", "a.py"),
        "c2": chunk("c2", "b.py"),
        "k1": chunk("k1", "@knowledge/team/refunds.md", "knowledge", "domain"),
        "k2": chunk("k2", "@knowledge/team/other.md", "knowledge", "domain"),
    }
    ranked = [("c1", 0.05), ("c2", 0.04), ("k1", 0.016), ("k2", 0.015)]  # reciprocal ranks x 0.5
    coverage = {"c1": 0.3, "c2": 0.2, "k1": 1.0, "k2": 0.1}
    rows = merge_rows(ranked, chunks, "how many days for a refund", coverage, None, frozenset())
    order = merged(rows, chunks, MODEL, {"k1": 0.5, "k2": 0.5})
    assert [cid for cid, _ in order] == ["k1", "c1", "c2", "k2"]
    scores = [score for _, score in order]
    assert scores == sorted(scores, reverse=True) and all(0 < s < 1 for s in scores)


def test_a_corpus_keeps_its_own_order_a_later_likely_item_lifting_the_ones_before_it() -> None:
    chunks = {c: chunk(c, f"{c}.py") for c in ("a", "b", "c")}
    ranked = [("a", 3.0), ("b", 2.0), ("c", 1.0)]
    rows = merge_rows(ranked, chunks, "query words", {"a": 0.1, "b": 0.0, "c": 0.9}, None, frozenset())
    order = merged(rows, chunks, MODEL, {})
    assert [cid for cid, _ in order] == ["a", "b", "c"]
    assert order[0][1] == order[1][1] >= order[2][1]


def test_a_prior_multiplies_the_odds() -> None:
    assert nudged(0.5, 1.0) == 0.5
    assert abs(nudged(0.5, 0.5) - 1 / 3) < 1e-12
    assert nudged(0.9, 0.5) > 0.8  # a strong match stays strong
    assert nudged(0.0, 0.5) == 0.0


def test_probabilities_along_a_corpus_are_pooled_where_they_rise() -> None:
    from kbc.retrieval.corpora import antitonic

    assert antitonic([0.9, 0.1, 0.5, 0.2]) == [0.9, 0.3, 0.3, 0.2]
    assert antitonic([0.1, 0.9]) == [0.5, 0.5]
    assert antitonic([]) == []


def test_a_note_below_the_note_floor_follows_every_other_candidate() -> None:
    chunks = {
        "c1": chunk("c1", "a.py"),
        "c2": chunk("c2", "b.py"),
        "k1": chunk("k1", "@knowledge/team/glossary.md", "knowledge", "domain"),
    }
    ranked = [("c1", 0.05), ("c2", 0.04), ("k1", 0.016)]
    coverage = {"c1": 0.3, "c2": 0.1, "k1": 0.25}
    rows = merge_rows(ranked, chunks, "a long issue report", coverage, None, frozenset())
    ungated = merged(rows, chunks, MODEL, {"k1": 0.5})
    assert [cid for cid, _ in ungated] == ["c1", "k1", "c2"]
    gated = merged(rows, chunks, MODEL, {"k1": 0.5}, note_floor=0.5)
    assert [cid for cid, _ in gated] == ["c1", "c2", "k1"]
    assert gated[2][1] <= gated[1][1]  # its score no higher than the candidates it follows


def test_nothing_relevant_needs_a_low_relevance_and_in_a_small_repository_most_words_missing() -> None:
    assert nothing_relevant(0.06, 0.09, 0.17, held=0.27, files=5)  # the off-topic task of a small library
    assert nothing_relevant(0.10, 0.20, 0.17, held=0.8, files=200)  # a repository the model knows the size of
    # a small repository that holds most of the task's words keeps its slice whatever the model says
    assert not nothing_relevant(0.14, 0.27, 0.17, held=0.8, files=5)
    assert not nothing_relevant(0.10, 0.20, 0.17, held=0.5, files=3)
    assert not nothing_relevant(0.30, 0.09, 0.17, held=0.1, files=200)  # relevant enough
    assert nothing_relevant(
        -1.0, 0.09, 0.17, held=0.1, files=200
    )  # without a relevance model, the confidence
    assert not nothing_relevant(-1.0, -1.0, 0.17, held=0.0, files=200)  # no score at all: no floor


def test_when_the_best_note_clears_the_floor_every_note_is_merged_on_its_probability() -> None:
    chunks = {
        "c1": chunk("c1", "a.py"),
        "c2": chunk("c2", "b.py"),
        "k1": chunk("k1", "@knowledge/team/leave.md", "knowledge", "domain"),
        "k2": chunk("k2", "@knowledge/team/severance.md", "knowledge", "domain"),
    }
    ranked = [("c1", 0.05), ("c2", 0.04), ("k1", 0.02), ("k2", 0.016)]
    coverage = {"c1": 0.3, "c2": 0.1, "k1": 0.9, "k2": 0.3}
    rows = merge_rows(ranked, chunks, "how much notice before leaving", coverage, None, frozenset())
    probability = dict(
        zip([r.id for r in rows], MODEL.probabilities([list(r.features) for r in rows]), strict=True)
    )
    floor = (probability["k1"] + probability["k2"]) / 2  # the best note above it, the other below
    order = [cid for cid, _ in merged(rows, chunks, MODEL, {}, note_floor=floor)]
    assert order.index("k1") == 0 and order.index("k2") < order.index("c2")  # k2 is not sent after the code
    # no note as likely as the floor: every note follows the repository's candidates
    order = [cid for cid, _ in merged(rows, chunks, MODEL, {}, note_floor=0.999)]
    assert order[-2:] == ["k1", "k2"]
