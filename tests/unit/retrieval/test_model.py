"""The ranking model: what it reads, and the fitted weights kbc ships."""

from __future__ import annotations

import json
import math
from importlib import resources

import pytest

from kbc.domain.errors import KbcError
from kbc.retrieval.features import (
    CONFIDENCE_FEATURES,
    FILE_FEATURES,
    UNIT_FEATURES,
    confidence_features,
    rank_score,
)
from kbc.retrieval.model import Linear, parse_models, shipped_models


def test_a_rank_reads_as_a_score_that_falls_with_its_log_and_vanishes_past_the_depth() -> None:
    scores = [rank_score(r) for r in (1, 2, 10, 100, 200)]
    assert scores[0] == 1.0 and scores == sorted(scores, reverse=True) and scores[-1] > 0
    assert rank_score(None) == 0.0 == rank_score(201)


def test_the_shipped_models_read_the_features_kbc_computes_and_say_how_they_were_fitted() -> None:
    models = shipped_models()
    for ranker in (models.lexical, models.hybrid):
        assert ranker.files.features == FILE_FEATURES and ranker.units.features == UNIT_FEATURES
        assert ranker.confidence is not None and ranker.confidence.features == CONFIDENCE_FEATURES
        assert 0.0 < ranker.floor < 1.0
        assert all(scale > 0 for scale in ranker.files.scale)
    about = models.about["lexical"]
    assert len(about["repositories"]) >= 20 and about["questions"] >= 500
    assert models.digest


def test_a_mode_without_a_fitted_merge_or_relevance_reads_the_lexical_ones() -> None:
    text = resources.files("kbc.retrieval").joinpath("ranker.json").read_text(encoding="utf-8")
    data = json.loads(text)
    lexical_part = data["lexical"]
    bare = {"files": data["hybrid"]["files"], "units": data["hybrid"]["units"]}
    models = parse_models({"lexical": lexical_part, "hybrid": bare})
    lexical, hybrid = models.lexical, models.hybrid
    assert lexical.merge is not None and lexical.relevance is not None
    # the lexical models weigh no vector evidence, so they read a hybrid ranking as well
    assert lexical.merge.weights[lexical.merge.features.index("similarity")] == 0.0
    assert hybrid.merge is lexical.merge and hybrid.note_floor == lexical.note_floor
    assert hybrid.relevance is lexical.relevance and hybrid.floor == lexical.floor
    assert hybrid.confidence is lexical.confidence and hybrid.files is not lexical.files
    # a mode fitted for itself keeps its own
    own = {**bare, "merge": lexical_part["merge"], "note_floor": 0.5}
    assert parse_models({"lexical": lexical_part, "hybrid": own}).hybrid.note_floor == 0.5


def test_a_model_fitted_on_other_features_is_refused_with_what_to_do() -> None:
    bad = {"features": ["lexical_best"], "mean": [0.0], "scale": [1.0], "weights": [1.0], "bias": 0.0}
    with pytest.raises(KbcError) as caught:
        Linear.from_data(bad, FILE_FEATURES)
    assert "fit_ranker.py" in (caught.value.hint or "")
    with pytest.raises(KbcError):
        parse_models({"lexical": {"files": bad}})


def test_probabilities_follow_the_weights() -> None:
    model = Linear(("a", "b"), (0.0, 0.0), (1.0, 2.0), (1.0, -1.0), 0.0)
    low, middle, high = model.probabilities([[-1.0, 0.0], [0.0, 0.0], [1.0, 0.0]])
    assert low < middle == 0.5 < high
    assert model.probabilities([[0.0, 2.0]])[0] == pytest.approx(1 / (1 + 2.718281828459045))


def test_an_unknown_feature_reads_as_its_mean() -> None:
    model = Linear(("a", "b"), (1.0, 5.0), (1.0, 2.0), (2.0, -1.0), 0.5)
    unknown, at_mean = model.logits([[3.0, math.nan], [3.0, 5.0]])
    assert unknown == at_mean == 0.5 + 2.0 * 2.0


def test_confidence_reads_how_far_the_first_file_leads() -> None:
    row = confidence_features([0.5] * 6, [0.9, 0.1, 0.05])
    assert row[:6] == [0.5] * 6 and row[6] > 0 and row[7] > row[6]
    assert confidence_features([0.5] * 6, [])[6] == -6.0  # no candidate: the bound, never beyond
    alone = confidence_features([0.5] * 6, [0.99999999])
    assert alone[6] == 6.0 and alone[7] != alone[7]  # one candidate leads nothing: unknown


def test_the_pieces_of_a_long_definition_belong_to_it_and_its_name_is_read_against_the_query() -> None:
    from kbc.domain.models import Chunk
    from kbc.retrieval.features import Signals, definition_groups, unit_features

    def chunk(cid: str, start: int, end: int, unit: str, symbols: tuple[str, ...] = ()) -> Chunk:
        return Chunk(
            cid,
            "pkg/s.py",
            start,
            end,
            "code",
            "python",
            "x\n" * (end - start + 1),
            "",
            "pkg.s",
            symbols,
            "source",
            unit=unit,
            tokens=10,
        )

    chunks = {
        c.id: c
        for c in (
            chunk("p", 1, 9, "prelude"),
            chunk("h", 10, 40, "method", ("pkg.s.Session.resolve_redirects",)),
            chunk("t", 41, 80, "method"),
            chunk("g", 82, 90, "method"),
            chunk("o", 91, 99, "function", ("pkg.s.merge_hooks",)),
        )
    }
    units = [(c.id, c.start_line, c.end_line) for c in chunks.values()]
    groups = definition_groups(units, chunks)
    assert groups == {
        "h": "pkg.s.Session.resolve_redirects",
        "t": "pkg.s.Session.resolve_redirects",
        "o": "pkg.s.merge_hooks",
    }  # "g" starts after a gap: no definition to continue
    signals = Signals(
        query="how are cookies kept across redirects",
        lexical=[("t", 5.0)],
        pool={"t": 5.0, "o": 1.0},
        vector=[],
        similarity={},
        matched=[],
        matched_kinds={},
        near=[],
        cited=[],
        lift={},
        chunks=chunks,
    )
    found = unit_features(signals, "pkg/s.py", units, chunks, {})
    rows = dict(zip([u[0] for u in units], found, strict=True))
    share = UNIT_FEATURES.index("definition_share")
    named = UNIT_FEATURES.index("name_terms")
    assert rows["h"][share] == rows["t"][share] == 1.0 and rows["o"][share] == 0.2
    # "redirects" of resolve_redirects (its words: the whole name, "resolve", "redirects")
    assert rows["h"][named] == pytest.approx(1 / 3) and rows["o"][named] == 0.0
