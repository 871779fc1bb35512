"""The best rows of an OR query from each term's BM25 scores by row, held in memory.

FTS5's BM25 of an OR query is, row by row, the sum over the query's terms of each term's own
score, added in the query's order (:mod:`kbc.index.remembered`). The sums are added into one
array over every row, term after term in that order: the same additions as FTS5's, so the same
values to the last bit. Choosing the best of them does not sort, nor partition, every row
matched: a sample of the rows gives a score that at least ``limit`` rows reach, and only the
rows at or below it are looked at. That is exact (the ``limit``-th best is at or below any such
score, so every row that can make the cut, ties included, is among them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

SAMPLE = 4096  # rows read to guess a score that at least the limit reach


def top_rows(postings: Sequence[tuple[Any, Any]], size: int, limit: int) -> tuple[Any, Any]:
    """The rows (and their summed scores) among the best ``limit`` of an OR query, with every
    row tied with the last of them; in no particular order.

    ``postings``: for each term in the query's order, its rows (distinct, below ``size``) and
    their scores (negative: lower is better, as FTS5's ``bm25()``)."""
    import numpy as np

    scores = np.zeros(size)
    for rows, values in postings:
        np.add.at(scores, rows, values)  # in place, one addition per row and term, in term order
    if limit < 1:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    chosen = np.flatnonzero(scores <= _reached(scores, limit))
    values = scores[chosen]
    if len(chosen) > limit:
        cut = np.partition(values, limit - 1)[limit - 1]
        keep = values <= cut  # every row tied at the cut: which of them stay is decided by id
        chosen, values = chosen[keep], values[keep]
    return chosen, values


def _reached(scores: Any, limit: int) -> float:
    """A score below 0 that at least ``limit`` rows reach (are at or below), guessed from a
    sample of the rows and checked; else the largest score below 0 (every row matched)."""
    import numpy as np

    if len(scores) > SAMPLE:
        sample = scores[:: len(scores) // SAMPLE]
        rank = min(len(sample) - 1, 2 * -(-limit * len(sample) // len(scores)))
        guess = float(np.partition(sample, rank)[rank])
        if guess < 0 and np.count_nonzero(scores <= guess) >= limit:
            return guess
    return float(np.nextafter(0.0, -1.0))  # every term score is negative: a matched row is below 0
