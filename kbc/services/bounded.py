"""A least-recently-used map bounded by the bytes its values hold, and by how many it holds.

What a served store keeps between requests (the slices and rankings already answered) is
bounded this way: a slice of a large budget holds more than one of a small budget, so a count
alone bounds nothing. The size of a value is an estimate from its texts (what dominates it),
measured once when it is kept; a value larger than the whole bound is not kept at all.
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from kbc.retrieval.results import Evidence, Ranking, Slice

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

ENTRY_BYTES = 256  # a kept value's own objects beside its texts: the key, tuples, a small dataclass
ITEM_BYTES = 200  # a slice item or a ranked chunk's fields beside its text


class Bounded(Generic[K, V]):
    """Keeps at most ``entries`` values holding at most ``max_bytes`` together (as ``size``
    estimates them); past either, the least recently used go first."""

    def __init__(self, max_bytes: int, entries: int, size: Callable[[V], int]) -> None:
        self.max_bytes = max_bytes
        self.entries = entries
        self._size = size
        self._kept: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self.bytes = 0  # what the values kept hold, as estimated

    def __len__(self) -> int:
        return len(self._kept)

    def __contains__(self, key: object) -> bool:
        return key in self._kept

    def get(self, key: K) -> V | None:
        found = self._kept.get(key)
        if found is None:
            return None
        self._kept.move_to_end(key)
        return found[0]

    def put(self, key: K, value: V) -> None:
        size = self._size(value)
        self.pop(key)
        if size > self.max_bytes or self.entries < 1:
            return
        self._kept[key] = (value, size)
        self.bytes += size
        while self.bytes > self.max_bytes or len(self._kept) > self.entries:
            _, (_, dropped) = self._kept.popitem(last=False)
            self.bytes -= dropped

    def pop(self, key: K) -> None:
        found = self._kept.pop(key, None)
        if found is not None:
            self.bytes -= found[1]

    def clear(self) -> None:
        self._kept.clear()
        self.bytes = 0


def slice_bytes(found: tuple[Slice, Evidence]) -> int:
    """What a kept slice holds: its text, and its items beside it."""
    answered, _ = found
    return ENTRY_BYTES + sys.getsizeof(answered.text) + ITEM_BYTES * len(answered.items)


def ranking_bytes(ranking: Ranking) -> int:
    """What a kept ranking holds: the texts of the chunks it ranked, and their fields."""
    texts = sum(
        sys.getsizeof(c.text) + sys.getsizeof(c.heading) + sys.getsizeof(c.context)
        for c in ranking.chunks.values()
    )
    return ENTRY_BYTES + texts + ITEM_BYTES * (len(ranking.chunks) + len(ranking.ranked))
