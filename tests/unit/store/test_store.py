"""The facts store: atomic generations, readable after a crash, clear errors."""

from pathlib import Path

import pytest
from helpers import RepoFactory, analyze_repo

from kbc.domain.errors import StoreError
from kbc.store.facts_store import FactsStore


def test_missing_store_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="run `kbc analyze`"):
        list(FactsStore(tmp_path / "nothing").facts())


def test_round_trip_keeps_every_fact(make_repo: RepoFactory) -> None:
    root = make_repo({"m.py": "import os\n\ndef f(x: int) -> int:\n    return os.getpid()\n"})
    store = analyze_repo(root)
    (facts,) = list(store.facts())
    assert facts.symbols[0].signature == "(x: int) -> int"
    assert facts.calls[0].target == "os.getpid"
    assert store.manifest()["counts"]["symbols"] == 1
    assert [f.path for f in store.inventory().files] == ["m.py"]


def test_an_interrupted_write_leaves_the_previous_generation_live(make_repo: RepoFactory) -> None:
    root = make_repo({"m.py": "def f(): ...\n"})
    store = analyze_repo(root)
    live = store.generation()
    # What a writer killed mid-way leaves behind: a half-written staging folder.
    staging = store.root / "tmp-killed"
    staging.mkdir()
    (staging / "facts.jsonl").write_text('{"path": "trunc')
    assert store.generation() == live
    assert [s.qname for f in store.facts() for s in f.symbols] == ["m.f"]
    analyze_repo(root)
    assert not staging.exists()


def test_a_damaged_generation_is_written_again_by_the_next_analysis(make_repo: RepoFactory) -> None:
    root = make_repo({"m.py": "def f(): ...\n"})
    store = analyze_repo(root)
    live = store.generation()
    intact = (live / "facts.jsonl").read_bytes()
    (live / "facts.jsonl").write_text("garbage")
    with pytest.raises(StoreError, match="cannot read"):
        list(store.facts())
    again = analyze_repo(root)  # nothing changed in the repository: same generation name
    assert again.generation() == live
    assert (live / "facts.jsonl").read_bytes() == intact
    assert sorted(p.name for p in store.root.iterdir() if p.name.startswith(("gen-", "tmp-"))) == [live.name]


def test_a_store_from_another_format_is_refused(make_repo: RepoFactory) -> None:
    root = make_repo({"m.py": ""})
    store = analyze_repo(root)
    manifest = store.generation() / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"format": 1', '"format": 99'))
    with pytest.raises(StoreError, match="format 99"):
        store.manifest()


def test_views_round_trip_sorted_and_replaced_whole(tmp_path: Path) -> None:
    from kbc.domain.views import Grounding, Provenance, View
    from kbc.store.views_store import ViewsStore

    store = ViewsStore(tmp_path)
    assert not store.exists() and store.read() == []
    module = View(
        "module:a",
        "module",
        "Module a",
        {"name": "a", "files": ["a.py"]},
        {"purpose": "Holds a."},
        Provenance("llm", "m", "1", "f" * 64),
        Grounding(3, 1, ("x.y",)),
    )
    architecture = View(
        "architecture", "architecture", "Architecture", {}, {"overview": ""}, Provenance("none")
    )
    store.write([module, architecture])
    assert store.read() == [architecture, module]
    store.write([module])
    assert store.read() == [module]
    assert [p.name for p in (tmp_path / "views").iterdir()] == ["views.jsonl"]


def test_a_replaced_file_is_whole_or_as_it_was(tmp_path: Path) -> None:
    from kbc.store.files import write_atomic

    target = tmp_path / "deep" / "state.json"
    write_atomic(target, "first")
    write_atomic(target, b"second")
    assert target.read_bytes() == b"second"
    assert [p.name for p in target.parent.iterdir()] == ["state.json"]  # nothing left beside it


def test_a_file_inside_a_folder_is_never_read_or_written_through_a_link(tmp_path: Path) -> None:
    from kbc.domain.errors import PathRefused
    from kbc.store.files import read_inside, write_atomic, write_inside

    outside = tmp_path / "outside.txt"
    outside.write_text("the user's own", encoding="utf-8")
    root = tmp_path / "repo"
    (root / "a").mkdir(parents=True)
    (root / "a" / "f").symlink_to(outside)
    (root / "l").symlink_to(tmp_path)
    for relative in ("a/f", "l/outside.txt"):
        with pytest.raises(PathRefused, match="is a link"):
            write_inside(root, relative, "x")
        with pytest.raises(PathRefused, match="is a link"):
            read_inside(root, relative, 100)
    assert outside.read_text(encoding="utf-8") == "the user's own"
    write_atomic(root / "a" / "f", "x")  # a link put there at the last moment is replaced
    assert outside.read_text(encoding="utf-8") == "the user's own"
    assert not (root / "a" / "f").is_symlink() and (root / "a" / "f").read_text() == "x"
    write_inside(root, "b/c/d.txt", "new")
    assert read_inside(root, "b/c/d.txt", 100) == b"new"
    assert read_inside(root, "b/missing/d.txt", 100) is None
    with pytest.raises(PathRefused, match="more than the 2 kbc reads"):
        read_inside(root, "b/c/d.txt", 2)
    with pytest.raises(PathRefused, match="not a folder"):
        write_inside(root, "b/c/d.txt/e", "x")
    assert sorted(p.name for p in (root / "b" / "c").iterdir()) == ["d.txt"]


def test_a_file_that_is_not_a_database_is_refused_and_closed(tmp_path: Path) -> None:
    import sqlite3

    from kbc.store.files import connect

    junk = tmp_path / "lexical.sqlite"
    junk.write_bytes(b"this is not a database, just bytes " * 100)
    with pytest.raises(sqlite3.DatabaseError):
        connect(junk)
    db = connect(tmp_path / "new" / "ok.sqlite", shared=True)
    assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    db.close()


def test_a_cached_result_of_an_older_shape_is_never_read_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """A result pickled before a field was added to the facts would load without it: the
    analyzers' versions, part of every cache key, carry the shape of the facts."""
    import dataclasses

    from kbc.domain import models
    from kbc.services.analyze import analyzer_version, code_analyzer_version

    shape = models.models_shape()
    assert shape in analyzer_version() and shape in code_analyzer_version()

    @dataclasses.dataclass
    class Added:  # a dataclass defined in the models' module changes the shape
        extra: int = 0

    Added.__module__ = models.__name__
    with monkeypatch.context() as patched:
        patched.setattr(models, "Added", Added, raising=False)
        assert models.models_shape() != shape
    assert models.models_shape() == shape
