"""What made a set of vectors: a width or a probe vector that changed under one model name is
a change; a provider's noise in the last digits, or another model's vectors as wide, is not."""

from __future__ import annotations

import random

from kbc.domain.errors import EmbedderUnavailable
from kbc.index.provenance import Provenance, folded, unsearchable


def probe(seed: int, width: int = 64) -> list[float]:
    rng = random.Random(seed)
    return [rng.gauss(0, 1) for _ in range(width)]


def test_a_width_changed_under_one_name_is_a_change() -> None:
    made, live = Provenance("openai/e", 32), Provenance("openai/e", 48)
    assert made.change(live) == "openai/e now answers 48-wide vectors, and they were made 32-wide"
    assert made.key != live.key


def test_a_probe_vector_is_compared_within_the_noise_of_a_provider() -> None:
    vector = probe(1)
    noisy = [x + 1e-4 * random.Random(2).uniform(-1, 1) for x in vector]
    made = Provenance("openai/e", 64, folded(vector))
    assert made.change(Provenance("openai/e", 64, folded(noisy))) == ""
    other = Provenance("openai/e", 64, folded(probe(3)))
    assert "another model answers under its name" in made.change(other)
    assert made.fingerprint in made.change(other) and other.fingerprint in made.change(other)


def test_another_models_vectors_of_the_same_width_can_be_held_beside() -> None:
    made = Provenance("openai/a", 64, folded(probe(1)))
    assert made.change(Provenance("openai/b", 64, folded(probe(2)))) == ""
    assert "made 64-wide by openai/a" in made.change(Provenance("openai/b", 32))


def test_a_record_reads_back_and_anything_else_is_no_record() -> None:
    made = Provenance("openai/e", 48, folded(probe(1)), replaced="set aside")
    assert Provenance.from_json(made.to_json()) == made
    assert Provenance.from_json(Provenance("m", 384).to_json()) == Provenance("m", 384)
    for text in ("", "[]", "{}", '{"model": "m", "width": "wide"}', "not json"):
        assert Provenance.from_json(text) is None


def test_an_index_is_searchable_only_with_queries_made_as_its_vectors() -> None:
    live = Provenance("openai/e", 48, folded(probe(1)))
    assert unsearchable(live.to_json(), lambda: live, 48) == ""
    # an index written before records were kept: its snapshot's width is compared
    assert unsearchable("", lambda: live, 48) == ""
    assert "48-wide" in unsearchable("", lambda: live, 32) and "32-wide" in unsearchable("", lambda: live, 32)
    assert "`kbc build`" in unsearchable(Provenance("openai/e", 32).to_json(), lambda: live, 32)

    def failing() -> Provenance:
        raise EmbedderUnavailable("the embedding model openai/e failed")

    assert unsearchable(live.to_json(), failing, 48) == "the embedding model openai/e failed"
