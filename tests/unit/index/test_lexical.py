"""The lexical index's search: BM25 order, ties decided by chunk id."""

import random
from pathlib import Path

import pytest

from kbc.domain.models import Chunk
from kbc.index.lexical import TIE_MARGIN, LexicalIndex, match_expression

WORDS = ["refund", "order", "payment", "charge", "window", "customer", "money", "tax", "cart"]


def index_of(tmp_path: Path, texts: list[str]) -> LexicalIndex:
    index = LexicalIndex(tmp_path / "lexical.sqlite")
    ids = list(range(len(texts)))
    random.Random(5).shuffle(ids)  # insertion order unrelated to id order
    chunks = [
        Chunk(f"c{ids[i]:04d}", f"f{i}.py", 1, 1, "code", "python", text) for i, text in enumerate(texts)
    ]
    index.replace_files([], chunks, [])
    index.commit()
    return index


def joined_search(index: LexicalIndex, query: str, limit: int) -> list[tuple[str, float]]:
    """The plain form: every match joined to its id, ordered by score then id."""
    rows = index.db.execute(
        "SELECT c.id, bm25(fts, 2.0, 3.0, 1.0) AS rank FROM fts JOIN chunks c ON c.rid = fts.rowid "
        "WHERE fts MATCH ? ORDER BY rank, c.id LIMIT ?",
        (match_expression(query), limit),
    )
    return [(str(i), -float(r)) for i, r in rows]


@pytest.mark.parametrize("limit", [1, 5, 40, TIE_MARGIN + 10, 1000])
def test_ties_at_the_cut_are_decided_by_id_as_a_full_sort_would(tmp_path: Path, limit: int) -> None:
    rng = random.Random(limit)
    # Many identical chunks (one tie group longer than the margin) among varied ones.
    texts = ["refund order window"] * (TIE_MARGIN + 30)
    texts += [" ".join(rng.choices(WORDS, k=rng.randint(2, 12))) for _ in range(300)]
    index = index_of(tmp_path, texts)
    for query in ("refund order window", "refund", "tax cart money", "customer charge payment"):
        assert index.search(query, limit) == joined_search(index, query, limit)


def test_no_match_and_no_terms_give_nothing(tmp_path: Path) -> None:
    index = index_of(tmp_path, ["refund order"])
    assert index.search("unrelated words", 10) == []
    assert index.search("   ", 10) == []
    assert index.search("refund", 0) == []


@pytest.mark.parametrize("seed", range(2))
def test_a_remembering_reader_gives_the_same_scores_to_the_last_bit(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    vocabulary = WORDS + [f"term{n}" for n in range(60)]
    texts = ["refund order window"] * (TIE_MARGIN + 30)
    texts += [" ".join(rng.choices(vocabulary, k=rng.randint(1, 40))) for _ in range(400)]
    plain = index_of(tmp_path, texts)
    remembering = LexicalIndex(tmp_path / "lexical.sqlite")
    remembering.remember()
    # Long queries (many terms, repeated words) and short ones, asked twice: the second time
    # every term's scores come from memory.
    queries = [" ".join(rng.choices(vocabulary, k=rng.randint(1, 120))) for _ in range(12)]
    for query in queries + queries + ["refund order window", "nothing matches this"]:
        for limit in (1, 3, TIE_MARGIN + 10, 200, 5000):
            assert remembering.search(query, limit) == plain.search(query, limit)
    ids = [f"c{n:04d}" for n in rng.sample(range(len(texts)), 50)]
    assert remembering.chunks(ids) == plain.chunks(ids)
    assert remembering.chunks(ids + ["missing"]) == plain.chunks(ids)


def test_a_remembering_index_forgets_what_it_rewrites(tmp_path: Path) -> None:
    index = index_of(tmp_path, ["refund order", "window tax"])
    index.remember()
    before = index.search("refund tax", 10)
    (refund,) = [cid for cid, _ in before if index.chunks([cid])[cid].path == "f0.py"]
    index.replace_files(["f0.py"], [Chunk("n0001", "f0.py", 1, 1, "code", "python", "cart money")], [])
    index.commit()
    assert [cid for cid, _ in index.search("refund tax", 10)] != [cid for cid, _ in before]
    assert index.chunks([refund]) == {}
    assert [cid for cid, _ in index.search("cart", 10)] == ["n0001"]


def test_a_remembering_reader_answers_whole_past_what_it_keeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kbc.index.remembered as remembered

    monkeypatch.setattr(remembered, "REMEMBERED_CHUNKS", 5)
    plain = index_of(tmp_path, [f"refund order {n}" for n in range(30)])
    remembering = LexicalIndex(tmp_path / "lexical.sqlite")
    remembering.remember()
    ids = [f"c{n:04d}" for n in range(30)]
    assert remembering.chunks(ids) == plain.chunks(ids)
    assert remembering.chunks(ids[:3]) == plain.chunks(ids[:3])
    assert len(remembering.chunks(ids)) == 30


def test_frequencies_count_the_chunks_holding_each_query_term_remembered_or_not(tmp_path: Path) -> None:
    index = index_of(tmp_path, ["refund window closed", "refund already made", "cart total"])
    expected = ({"refund": 2, "window": 1, "kafka": 0}, 3)
    assert index.frequencies("Refund window kafka") == expected
    index.remember()
    assert index.frequencies("Refund window kafka") == expected


def test_a_wal_file_of_the_index_replaced_is_never_read_as_the_new_ones(tmp_path: Path) -> None:
    import sqlite3

    from kbc.index.build import STAGED, publish_index
    from kbc.store.layout import LEXICAL

    live = tmp_path / LEXICAL
    old = sqlite3.connect(live)  # an index of the earlier format, in WAL mode
    old.execute("PRAGMA journal_mode=WAL")
    old.execute("CREATE TABLE t (x TEXT)")
    old.execute("INSERT INTO t VALUES ('old')")
    old.commit()
    reader = sqlite3.connect(live)  # a reader of it, holding its build: the WAL is kept
    reader.execute("BEGIN")
    assert reader.execute("SELECT x FROM t").fetchall() == [("old",)]
    old.execute("INSERT INTO t VALUES ('old, later')")
    old.commit()
    staged = sqlite3.connect(tmp_path / STAGED)
    old.backup(staged)
    staged.execute("PRAGMA journal_mode=DELETE")
    staged.execute("DELETE FROM t")
    staged.execute("INSERT INTO t VALUES ('new')")
    staged.commit()
    staged.close()
    publish_index(tmp_path)
    fresh = sqlite3.connect(live)
    assert fresh.execute("SELECT x FROM t").fetchall() == [("new",)]
    assert fresh.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert reader.execute("SELECT x FROM t").fetchall() == [("old",)]  # it keeps its own build
    for connection in (fresh, reader, old):
        connection.close()
