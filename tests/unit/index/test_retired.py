"""Vectors no index needs: retired into a real local Chroma store, kept within a bound, the
longest retired deleted first, and no longer retired once needed again."""

from __future__ import annotations

from pathlib import Path

from kbc.index.embed import load_embedder, model_name
from kbc.index.retired import keep_none_next, retire, retired_units
from kbc.index.vectors import open_vector_store


def test_retired_vectors_are_kept_within_the_bound_oldest_out_first(tmp_path: Path) -> None:
    embedder = load_embedder(model_name())
    store = open_vector_store(tmp_path, str(tmp_path), embedder)
    ids = [f"unit-{n}" for n in range(6)]
    vectors = embedder.embed([f"def f{n}(): return {n}" for n in range(6)])
    store.add(ids, vectors, [{"chunk_id": f"chunk-{n}"} for n in range(6)], ids)
    assert retired_units(tmp_path) == set()

    # the index needs units 0 and 1: 2 to 5 retired, at most 2 x 1 of them kept
    assert retire(tmp_path, store, ids[2:4], 1, keep=2.0, floor=0) == 0
    assert retire(tmp_path, store, ids[2:], 1, keep=2.0, floor=0) == 2
    # 2 and 3 were retired first, so they went first
    assert retired_units(tmp_path) == {"unit-4", "unit-5"}
    assert store.ids() == {"unit-0", "unit-1", "unit-4", "unit-5"}

    # unit 4 needed again: no longer retired, and kept
    assert retire(tmp_path, store, ["unit-5"], 3, keep=2.0, floor=0) == 0
    assert retired_units(tmp_path) == {"unit-5"}
    assert store.ids() == {"unit-0", "unit-1", "unit-4", "unit-5"}
    # the floor keeps some whatever the index needs
    assert retire(tmp_path, store, ["unit-0", "unit-5"], 0, keep=0.0, floor=2) == 0
    # the credentials found changed: the next retire keeps none, and the one after keeps again
    keep_none_next(tmp_path)
    assert retire(tmp_path, store, ["unit-1", "unit-5"], 2, keep=2.0, floor=0) == 2
    assert retired_units(tmp_path) == set() and store.ids() == {"unit-0", "unit-4"}
    assert retire(tmp_path, store, ["unit-4"], 1, keep=2.0, floor=0) == 0
    assert retired_units(tmp_path) == {"unit-4"}
