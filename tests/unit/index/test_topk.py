"""The best rows of an OR query from scores in memory: the rows, scores and ties of the full sort."""

import random
from pathlib import Path

import numpy as np
import pytest

from kbc.domain.models import Chunk
from kbc.index.lexical import LexicalIndex
from kbc.index.topk import SAMPLE, top_rows


def full_sort(postings: list[tuple[np.ndarray, np.ndarray]], limit: int) -> list[tuple[float, int]]:
    """Every row's sum in the terms' order, sorted by score then row, the first ``limit``."""
    total: dict[int, float] = {}
    for rows, values in postings:
        for row, value in zip(rows.tolist(), values.tolist(), strict=True):
            total[row] = total.get(row, 0.0) + value
    return sorted((score, row) for row, score in total.items())[:limit]


def chosen(postings: list[tuple[np.ndarray, np.ndarray]], size: int, limit: int) -> list[tuple[float, int]]:
    rows, scores = top_rows(postings, size, limit)
    return sorted(zip(scores.tolist(), rows.tolist(), strict=True))[:limit]


@pytest.mark.parametrize("seed", range(4))
def test_the_rows_chosen_are_the_full_sorts_to_the_last_bit_ties_included(seed: int) -> None:
    rng = random.Random(seed)
    size = 3 * SAMPLE + 17  # past the sample: the cut is guessed, then checked
    levels = [-0.5, -1.25, -2.0, -3.1]  # few distinct scores: long runs of ties at every cut
    postings = []
    for _ in range(rng.randint(1, 160)):
        rows = np.array(sorted(rng.sample(range(size), rng.randint(0, size // 3))), dtype=np.int64)
        values = np.array([rng.choice(levels) for _ in rows]) * rng.choice([1.0, 0.1, 0.7])
        postings.append((rows, values))
    matched = len({row for rows, _ in postings for row in rows.tolist()})
    for limit in (1, 2, 10, 200, 1000, matched - 1, matched, matched + 5):
        if limit >= 1:
            want = full_sort(postings, limit)
            got = chosen(postings, size, limit)
            assert got == want
            cut = want[-1][0] if want else None
            rows, scores = top_rows(postings, size, limit)
            assert all(score <= cut for score in scores.tolist())  # nothing past the cut ...
            assert sum(1 for s, _ in full_sort(postings, size) if s == cut) == sum(
                1 for s in scores.tolist() if s == cut
            )  # ... and every row tied at it


def test_a_query_holding_nothing_and_an_empty_index_give_nothing() -> None:
    empty = np.zeros(0, dtype=np.int64), np.zeros(0)
    assert chosen([empty, empty], 50, 10) == []
    assert chosen([], 0, 10) == []
    one = np.array([3], dtype=np.int64), np.array([-1.0])
    assert chosen([one], 10, 0) == []
    assert chosen([one, empty], 10, 5) == [(-1.0, 3)]


def test_a_long_query_over_many_units_is_answered_as_fts5_answers_it(tmp_path: Path) -> None:
    """A query of 150 distinct terms, over units among which many are identical (ties at every
    cut): a long-lived reader's answers are FTS5's OR query's, score for score; and its
    answers to a query of every word, its AND query's."""
    rng = random.Random(11)
    vocabulary = [f"w{n}" for n in range(400)] + ["refund", "order", "window"]
    weights = [1 / (n + 1) for n in range(len(vocabulary))]  # a few words common, most rare
    texts = ["refund order window"] * 150 + [
        " ".join(rng.choices(vocabulary, weights, k=rng.randint(1, 60))) for _ in range(SAMPLE + 500)
    ]
    plain = LexicalIndex(tmp_path / "lexical.sqlite")
    ids = list(range(len(texts)))
    rng.shuffle(ids)  # insertion order unrelated to id order
    plain.replace_files(
        [],
        [Chunk(f"c{ids[i]:05d}", f"f{i % 97}.py", i, i, "code", "python", t) for i, t in enumerate(texts)],
        [],
    )
    plain.commit()
    remembering = LexicalIndex(tmp_path / "lexical.sqlite")
    remembering.remember()
    long_query = " ".join(rng.sample(vocabulary, 150))
    queries = [long_query, long_query, "refund order window", "window", "w1 w2 w3", "nothing here"]
    for query in queries:
        for limit in (1, 5, 40, 210, 5000):
            assert remembering.search(query, limit) == plain.search(query, limit)
    assert remembering.frequencies(long_query) == plain.frequencies(long_query)
    for words in (["refund", "order"], ["window"], ["w1", "w2"], ["w3", "nothing"], vocabulary[:12]):
        for limit in (1, 40, 5000):
            assert remembering.search_all(words, limit) == plain.search_all(words, limit)
    some = [f"c{n:05d}" for n in rng.sample(range(len(texts)), 300)]
    assert remembering.coverage(long_query, some) == plain.coverage(long_query, some)
