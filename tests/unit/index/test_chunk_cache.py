"""The chunk cache: keyed by everything that decides a file's chunks, bounded, least recently
used first out."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from kbc.domain.progress import PassReport, Reporter
from kbc.index.chunk_cache import ChunkCache, chunk_key, chunk_through_cache
from kbc.index.definitions import Definition
from kbc.index.prepare import ChunkTask, prepare

LAYOUT = "10:1:1:60:12"


def task(root: Path, path: str = "pkg/mod.py", **fields: object) -> ChunkTask:
    base = ChunkTask(path, str(root / path), "python", "pkg.mod", None, False, 60, 12)
    return dataclasses.replace(base, **fields)  # type: ignore[arg-type]


def test_the_key_changes_with_each_input_that_decides_the_chunks_and_not_with_the_work_tree(
    tmp_path: Path,
) -> None:
    plain = task(tmp_path)
    key = chunk_key(plain, "blob-1", LAYOUT)
    assert chunk_key(task(tmp_path / "elsewhere"), "blob-1", LAYOUT) == key  # where the tree is
    definition = Definition("pkg.mod.f", "f", "function", 1, 2, "def f()", False, "python")
    others = [
        chunk_key(plain, "blob-2", LAYOUT),
        chunk_key(plain, "blob-1", "first:" + LAYOUT),
        chunk_key(task(tmp_path, "pkg/other.py"), "blob-1", LAYOUT),
        chunk_key(task(tmp_path, module="pkg.other"), "blob-1", LAYOUT),
        chunk_key(task(tmp_path, role="test"), "blob-1", LAYOUT),
        chunk_key(task(tmp_path, scan=True), "blob-1", LAYOUT),
        chunk_key(task(tmp_path, also=("hunter2",)), "blob-1", LAYOUT),
        chunk_key(task(tmp_path, definitions=()), "blob-1", LAYOUT),
        chunk_key(task(tmp_path, definitions=(definition,)), "blob-1", LAYOUT),
        chunk_key(task(tmp_path, definitions=(dataclasses.replace(definition, end=3),)), "blob-1", LAYOUT),
    ]
    assert len({key, *others}) == len(others) + 1


def test_chunks_come_from_the_cache_when_the_key_was_seen_and_equal_those_cut_now(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text('def f():\n    """F."""\n    return 1\n')
    cache = tmp_path / "chunks.sqlite"
    tasks = [task(tmp_path)]
    keys = {"pkg/mod.py": chunk_key(tasks[0], "blob-1", LAYOUT)}
    first, cached = chunk_through_cache(tasks, keys, cache, 1, PassReport(Reporter(), "chunk", 1, "files"))
    assert cached == 0 and first == [prepare(tasks[0])]
    (tmp_path / "pkg" / "mod.py").write_text("changed on disk, but the key says the content is the same\n")
    again, cached = chunk_through_cache(tasks, keys, cache, 1, PassReport(Reporter(), "chunk", 1, "files"))
    assert (again, cached) == (first, 1)
    fresh, cached = chunk_through_cache(
        tasks, keys, cache, 1, PassReport(Reporter(), "chunk", 1, "files"), fresh=True
    )
    assert cached == 0 and fresh != first  # read from the file again


def test_past_its_bound_the_cache_drops_the_entries_used_least_recently(tmp_path: Path) -> None:
    prepared = ("p.py", [], 0, [])
    with ChunkCache(tmp_path / "chunks.sqlite") as cache:
        for key in ("old", "older", "recent", "live"):
            cache.put_many([(key, prepared)])
            time.sleep(0.01)  # each entry put at its own time
        cache.get_many(["old"])  # used again: more recent than "older" and "recent"
        assert cache.retain(["live"], slack=3) == 1
        assert set(cache.get_many(["old", "older", "recent", "live"])) == {"old", "recent", "live"}


def test_the_entries_go_when_the_credentials_found_in_the_repository_change(tmp_path: Path) -> None:
    prepared = ("p.py", [], 0, [])
    with ChunkCache(tmp_path / "chunks.sqlite") as cache:
        assert not cache.forget_if_exposed([])  # none found, as when the entries were cut
        cache.put_many([("a", prepared)])
        assert not cache.forget_if_exposed([]) and set(cache.get_many(["a"])) == {"a"}
        assert cache.forget_if_exposed(["Xy7pQ2mN9vB4kL"])  # a value an entry may show unredacted
        assert cache.get_many(["a"]) == {}
        assert not cache.forget_if_exposed(["Xy7pQ2mN9vB4kL"])
    assert b"Xy7pQ2mN9vB4kL" not in (tmp_path / "chunks.sqlite").read_bytes()  # only a digest kept
