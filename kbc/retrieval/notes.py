"""Team notes searched in their own statistics.

The index ranks every chunk with BM25 over the whole repository, so a word's rarity is its
rarity in the code. For notes written in another language than the code's, that rarity is
wrong: the function words of a German or French note ("es", "vor", "einen", "les") occur in
no code, so they weigh like the rarest identifier, and the note that repeats them outranks
the one that answers. Here the notes are ranked within themselves: BM25 over the index's four
columns with its column weights, FTS5's constants and rarity, its rarities and lengths counted
over the notes alone: a word most notes hold weighs little, in whatever language. Unlike FTS5's
``bm25()``, which saturates the weighted sum of a word's counts over the row's whole length,
each column's count is saturated on its own length and the columns' scores are weighed and
added (the merge is fitted on this ranking).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from kbc.domain.models import Chunk
from kbc.index.lexical import MAX_QUERY_TERMS, WEIGHTS, indexed_columns
from kbc.index.tokens import tokens

K1 = 1.2  # FTS5's bm25() constants
B = 0.75


@dataclass(frozen=True, slots=True)
class _Note:
    id: str
    counts: tuple[Counter[str], ...]  # per column
    lengths: tuple[int, ...]


class NoteStatistics:
    """BM25 over the team-note chunks alone (built once from their chunks)."""

    def __init__(self, chunks: Iterable[Chunk]) -> None:
        self.notes: list[_Note] = []
        # word -> the notes holding it (their places in ``notes``): a search visits only those
        self.postings: dict[str, list[int]] = defaultdict(list)
        totals = [0] * len(WEIGHTS)
        for place, chunk in enumerate(sorted(chunks, key=lambda c: c.id)):
            columns = [c.split() for c in indexed_columns(chunk)]
            counts = tuple(Counter(words) for words in columns)
            lengths = tuple(len(words) for words in columns)
            self.notes.append(_Note(chunk.id, counts, lengths))
            for word in {word for words in columns for word in words}:
                self.postings[word].append(place)
            totals = [t + n for t, n in zip(totals, lengths, strict=True)]
        size = max(1, len(self.notes))
        self.average = [max(1.0, t / size) for t in totals]

    def __len__(self) -> int:
        return len(self.notes)

    def _terms(self, query: str) -> list[str]:
        """The query's distinct words, at most as many as the index searches for."""
        return list(dict.fromkeys(tokens(query)))[:MAX_QUERY_TERMS]

    def _idf(self, term: str) -> float:
        """FTS5's: log((N - n + 0.5) / (n + 0.5)), at least a millionth."""
        n, total = len(self.postings.get(term, ())), len(self.notes)
        return max(1e-6, math.log((total - n + 0.5) / (n + 0.5)))

    def search(self, query: str, limit: int) -> list[tuple[str, float]]:
        """(chunk id, BM25 score: higher is better) of the notes holding a word of ``query``,
        best first, ties by id; at most ``limit``."""
        terms = [t for t in self._terms(query) if t in self.postings]
        if not terms or limit < 1:
            return []
        score: dict[int, float] = defaultdict(float)
        for term in terms:
            idf = self._idf(term)
            for place in self.postings[term]:
                note = self.notes[place]
                for column, weight in enumerate(WEIGHTS):
                    tf = note.counts[column].get(term, 0)
                    if tf:
                        norm = K1 * (1 - B + B * note.lengths[column] / self.average[column])
                        score[place] += weight * idf * tf * (K1 + 1) / (tf + norm)
        scored = [(self.notes[place].id, value) for place, value in score.items() if value > 0]
        scored.sort(key=lambda item: (-item[1], item[0]))
        return scored[:limit]
