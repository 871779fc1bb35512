"""Exact vector search: every unit scored, ties broken by id, snapshots whole or ignored."""

from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kbc.index.exact import SNAPSHOT, ExactVectors, digest_of, load_snapshot, sweep_snapshots, write_snapshot


def random_rows(count: int, dim: int, seed: int) -> dict[str, tuple[str, list[float]]]:
    rng = np.random.default_rng(seed)
    return {
        f"u{i:05d}": (f"c{i // 3}", rng.normal(size=dim).astype(np.float32).tolist()) for i in range(count)
    }


def brute_force(rows: dict[str, tuple[str, list[float]]], query: list[float]) -> list[tuple[str, float]]:
    q = np.asarray(query, dtype=np.float64)
    scored = [
        (unit, float(np.dot(v, q) / (np.linalg.norm(v) * np.linalg.norm(q)))) for unit, (_, v) in rows.items()
    ]
    return sorted(scored, key=lambda pair: (-pair[1], pair[0]))


@settings(max_examples=40, deadline=None)
@given(count=st.integers(1, 400), limit=st.integers(1, 500), seed=st.integers(0, 2**16))
def test_search_returns_the_true_nearest_units_in_order(count: int, limit: int, seed: int) -> None:
    rows = random_rows(count, 16, seed)
    query = np.random.default_rng(seed + 1).normal(size=16).tolist()
    hits = ExactVectors.from_rows("m", rows).search(query, limit)
    expected = brute_force(rows, query)[:limit]
    truth = dict(brute_force(rows, query))
    # each place holds a unit as near as the true one there (units nearer to each other than
    # float32 can tell, 1e-8 apart, may trade places), each once, with its own similarity
    assert len({h.unit for h in hits}) == len(hits) == len(expected)
    assert all(abs(truth[h.unit] - s) < 1e-6 for h, (_, s) in zip(hits, expected, strict=True))
    assert all(abs(h.similarity - truth[h.unit]) < 1e-5 for h in hits)
    assert all(h.chunk == rows[h.unit][0] for h in hits)


def test_units_tied_at_the_cut_are_chosen_by_id_not_by_position() -> None:
    same = [1.0, 0.0, 0.0]
    rows = {"b": ("cb", same), "d": ("cd", same), "a": ("ca", same), "c": ("cc", [0.0, 1.0, 0.0])}
    hits = ExactVectors.from_rows("m", rows).search([1.0, 0.0, 0.0], 2)
    assert [h.unit for h in hits] == ["a", "b"]
    assert [h.chunk for h in hits] == ["ca", "cb"]


def test_an_empty_snapshot_or_a_zero_query_is_harmless() -> None:
    assert ExactVectors.from_rows("m", {}).search([1.0, 0.0], 5) == []
    rows = random_rows(5, 4, 3)
    hits = ExactVectors.from_rows("m", rows).search([0.0] * 4, 3)
    assert [h.unit for h in hits] == ["u00000", "u00001", "u00002"]  # all score 0: by id


def test_a_snapshot_reads_back_bit_for_bit(tmp_path: Path) -> None:
    rows = random_rows(50, 8, 7)
    snapshot = ExactVectors.from_rows("model@1", rows)
    write_snapshot(tmp_path, snapshot)
    loaded = load_snapshot(tmp_path, snapshot.digest)
    assert loaded is not None
    assert (loaded.units, loaded.chunks, loaded.model_id) == (sorted(rows), snapshot.chunks, "model@1")
    assert np.array_equal(np.asarray(loaded.matrix), snapshot.matrix)
    assert snapshot.digest == digest_of("model@1", rows)


def test_a_snapshot_other_than_the_one_named_is_not_used(tmp_path: Path) -> None:
    snapshot = ExactVectors.from_rows("m", random_rows(5, 4, 1))
    write_snapshot(tmp_path, snapshot)
    assert load_snapshot(tmp_path, digest_of("m", ["another"])) is None
    assert load_snapshot(tmp_path, "") is None
    assert load_snapshot(tmp_path / "missing", snapshot.digest) is None


def test_a_new_snapshot_leaves_the_old_one_until_it_is_swept(tmp_path: Path) -> None:
    old = ExactVectors.from_rows("m", random_rows(5, 4, 1))
    write_snapshot(tmp_path, old)
    # A later write that died after its matrix: the old snapshot is whole and still read.
    (tmp_path / ".vectors-0123456789abcdef.npy.partial").write_bytes(b"\x93NUMPY half")
    loaded = load_snapshot(tmp_path, old.digest)
    assert loaded is not None and loaded.units == old.units
    new = ExactVectors.from_rows("m", random_rows(6, 4, 2))
    write_snapshot(tmp_path, new)
    # A reader of the index that names the old snapshot still finds it, the new one its own.
    assert load_snapshot(tmp_path, old.digest) is not None
    assert load_snapshot(tmp_path, new.digest) is not None
    assert not list(tmp_path.glob(".vectors*"))
    sweep_snapshots(tmp_path, {new.digest})
    assert load_snapshot(tmp_path, old.digest) is None
    assert sorted(p.name for p in tmp_path.glob("*vectors*")) == [
        f"vectors-{new.digest}.json",
        f"vectors-{new.digest}.npy",
    ]


def test_a_pointer_to_a_lost_or_torn_matrix_is_not_used(tmp_path: Path) -> None:
    snapshot = ExactVectors.from_rows("m", random_rows(5, 4, 1))
    write_snapshot(tmp_path, snapshot)
    matrix = tmp_path / f"vectors-{snapshot.digest}.npy"
    matrix.write_bytes(matrix.read_bytes()[:100])
    assert load_snapshot(tmp_path, snapshot.digest) is None
    matrix.unlink()
    assert load_snapshot(tmp_path, snapshot.digest) is None
    (tmp_path / SNAPSHOT.format(digest=snapshot.digest)).write_text("{not json")
    assert load_snapshot(tmp_path, snapshot.digest) is None


def test_similarities_give_each_asked_chunk_its_closest_unit() -> None:
    rows = random_rows(60, 8, 3)
    query = np.random.default_rng(4).normal(size=8).tolist()
    expected: dict[str, float] = {}
    for unit, similarity in brute_force(rows, query):
        expected.setdefault(rows[unit][0], similarity)
    found = ExactVectors.from_rows("m", rows).similarities(query, ["c1", "c7", "nowhere"])
    assert set(found) == {"c1", "c7"}
    assert all(abs(found[c] - expected[c]) < 1e-5 for c in found)
