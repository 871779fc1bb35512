"""The analysis cache keeps what no build needs now up to a few times the current entries, the
most recently used first: a branch switched to and back finds its own facts."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from kbc.domain.models import AnalysisFailed
from kbc.store.cache import AnalysisCache


def failed(path: str) -> AnalysisFailed:
    return AnalysisFailed(path=path, blob="b", error="syntax")


def test_past_its_bound_the_least_recently_used_entries_go_first(tmp_path: Path) -> None:
    with AnalysisCache(tmp_path / "analysis.sqlite") as cache:
        cache.put_many([(key, failed(key)) for key in ("a", "b", "c", "d")])
        time.sleep(0.01)
        assert set(cache.get_many(["a"])) == {"a"}  # read since: the newest of the others
        assert cache.retain(["d"], slack=2) == 2  # d, and one more: the most recently used
    with AnalysisCache(tmp_path / "analysis.sqlite") as cache:
        assert set(cache.get_many(["a", "b", "c", "d"])) == {"a", "d"}
        assert cache.retain(["a", "d"], slack=2) == 0  # within its bound: nothing goes


def test_a_cache_written_before_entries_were_dated_is_read_and_bounded(tmp_path: Path) -> None:
    path = tmp_path / "analysis.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE analysis (key TEXT PRIMARY KEY, data BLOB)")
    with AnalysisCache(path) as cache:
        cache.put_many([(key, failed(key)) for key in ("x", "y", "z")])
        assert set(cache.get_many(["x", "y", "z"])) == {"x", "y", "z"}
        assert cache.retain(["z"], slack=2) == 1
        assert len(cache.get_many(["x", "y", "z"])) == 2
