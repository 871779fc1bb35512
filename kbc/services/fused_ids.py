"""The ids of queries answered across repositories, remembered so that a report of which
items helped reaches each repository that answered (as its own query id and items)."""

from __future__ import annotations

import threading
from collections import OrderedDict

FUSED_IDS = 1000  # cross-repository query ids remembered for report_usage

Parts = tuple[tuple[str, str, frozenset[str]], ...]  # (repository, its query id, its item ids)


class FusedIds:
    """The latest :data:`FUSED_IDS` cross-repository query ids, oldest forgotten first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._parts: OrderedDict[str, Parts] = OrderedDict()

    def remember(self, query_id: str, parts: Parts) -> None:
        with self._lock:
            self._parts[query_id] = parts
            while len(self._parts) > FUSED_IDS:
                self._parts.popitem(last=False)

    def parts_of(self, query_id: str) -> Parts | None:
        """Each repository's own (name, query id, item ids) of a fused query; None when the id
        is not one (or was forgotten)."""
        with self._lock:
            return self._parts.get(query_id)
