"""Precedents: what the repository's own history changed for requests like the task.

A repository's commits are past tasks with known answers: a message saying what was
wanted, and the files changed for it. A new task is compared with the messages of the
latest commits (TF-IDF cosine over :func:`kbc.index.history.message_words`, each message a
set of words, the task's words weighed by ``1 + log tf``); the :data:`NEAREST` most similar
commits credit the files they changed, each by its similarity over the square root of the
number of files it changed. The credit is one of the file model's features
(``precedent``, relative to the best candidate's): it is fitted with the others on the
histories of many repositories, and it is read from this repository's history alone, so
each repository's ranking learns from its own past without any weight being fitted on it.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence

from kbc.index.history import message_words

NEAREST = 30  # the most similar past commits that credit their files
MIN_PRECEDENTS = 10  # commits a history needs to say anything (fewer: the credit is unknown)


class Precedents:
    """The latest commits' words and changed files, indexed for :meth:`credit`."""

    def __init__(self, commits: Sequence[tuple[Sequence[str], Sequence[str]]]) -> None:
        self.paths = [tuple(paths) for _, paths in commits]
        frequency: Counter[str] = Counter()
        for words, _ in commits:
            frequency.update(set(words))
        total = len(commits)
        self.idf = {w: math.log(total / (1 + n)) for w, n in frequency.items() if total / (1 + n) > 1}
        self.postings: dict[str, list[tuple[int, float]]] = defaultdict(list)
        for number, (words, _) in enumerate(commits):
            weights = {w: self.idf[w] for w in set(words) if w in self.idf}
            norm = math.sqrt(sum(v * v for v in weights.values())) or 1.0
            for word in sorted(weights):
                self.postings[word].append((number, weights[word] / norm))

    def __len__(self) -> int:
        return len(self.paths)

    def credit(self, text: str) -> dict[str, float]:
        """Path -> the credit the commits most like ``text`` give it (empty when none shares a
        word with it)."""
        counts = Counter(w for w in message_words(text) if w in self.idf)
        if not counts:
            return {}
        weights = {w: (1 + math.log(n)) * self.idf[w] for w, n in counts.items()}
        norm = math.sqrt(sum(v * v for v in weights.values()))
        similarity: dict[int, float] = defaultdict(float)
        for word in sorted(weights):
            share = weights[word] / norm
            for number, weight in self.postings.get(word, ()):
                similarity[number] += share * weight
        nearest = sorted(similarity.items(), key=lambda kv: (-kv[1], kv[0]))[:NEAREST]
        credit: dict[str, float] = defaultdict(float)
        for number, score in nearest:
            paths = self.paths[number]
            for path in paths:
                credit[path] += score / math.sqrt(len(paths))
        return dict(credit)
