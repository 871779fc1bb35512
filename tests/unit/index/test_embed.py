"""The packaged model's id is known before the model is loaded, and is the id it loads with."""

from __future__ import annotations

import pytest

from kbc.index.embed import DEFAULT_MODEL, MAX_TOKENS, DeferredEmbedder, load_embedder, open_embedder
from kbc.index.provenance import Provenance


@pytest.mark.parametrize("unit_tokens", [32, 64, MAX_TOKENS, 4 * MAX_TOKENS])
def test_the_packaged_model_id_without_loading_is_the_one_it_loads_with(unit_tokens: int) -> None:
    deferred = open_embedder(DEFAULT_MODEL, unit_tokens)
    assert isinstance(deferred, DeferredEmbedder)
    assert deferred.model_id == load_embedder(DEFAULT_MODEL, unit_tokens).model_id


def test_a_deferred_embedder_embeds_as_the_loaded_model_does() -> None:
    deferred, loaded = open_embedder(DEFAULT_MODEL), load_embedder(DEFAULT_MODEL)
    texts = ["def refund(order): ...", "the refund window is 30 days"]
    assert deferred.embed(texts) == loaded.embed(texts)
    assert deferred.embed_query(texts[:1]) == loaded.embed_query(texts[:1])
    assert deferred.dim == loaded.dim == 384


def test_what_makes_the_packaged_models_vectors_is_known_without_loading_it() -> None:
    deferred = DeferredEmbedder(64, for_queries=True)
    assert deferred.provenance() == load_embedder(DEFAULT_MODEL, 64).provenance()
    assert deferred.provenance() == Provenance(deferred.model_id, 384)
