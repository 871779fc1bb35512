"""What a publication holds and what a server accepts of one: the store's files a server reads
(no caches, locks or older generations), consistent copies of its databases, manifests read
back as written and refused when they name a path outside a store, come from another kbc, or
are no manifest at all; and the published stores a workspace's configuration names."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from helpers import repo_factory

from kbc import __version__
from kbc.domain.errors import ConfigError, FieldError, KbcError, StoreError
from kbc.domain.settings import load_settings
from kbc.domain.workspace import RepositoryEntry, repository_entry
from kbc.providers.objectstore import Location, parse_location
from kbc.services.components import Components
from kbc.services.knowledge import KnowledgeBase
from kbc.services.publication import Entry, Manifest, parse_manifest, refused, store_files, usable_path
from kbc.store.files import copy_database

SHA = "a" * 64


def manifest(**changes: object) -> Manifest:
    values: dict[str, object] = {
        "repository": "shop",
        "commit": "c" * 40,
        "kbc": __version__,
        "versions": {"chunker": "10", "store": "1"},
        "files": (Entry("state.json", SHA, 10), Entry("index/lexical.sqlite", "b" * 64, 4096)),
        "built": 1.5,
        "published": "2026-01-01T00:00:00Z",
    }
    values.update(changes)
    return Manifest(**values)  # type: ignore[arg-type]


def test_a_manifest_reads_back_as_written_and_its_id_is_its_files() -> None:
    written = manifest()
    read = parse_manifest(written.to_json().encode(), "here")
    assert read == written
    assert manifest(published="2027-01-01T00:00:00Z", built=9.0).id == written.id
    assert manifest(files=(Entry("state.json", "d" * 64, 10),)).id != written.id


@pytest.mark.parametrize(
    "path",
    [
        "../state.json",
        "/etc/passwd",
        "index/../../x",
        "cache/analysis.sqlite",
        "lock",
        "gaps.sqlite",
        "index/a b",
    ],
)
def test_a_manifest_naming_a_file_outside_what_a_store_publishes_is_refused(path: str) -> None:
    assert not usable_path(path)
    bad = manifest(files=(Entry(path, SHA, 1),)).to_json().encode()
    with pytest.raises(StoreError, match="does not hold"):
        parse_manifest(bad, "s3://b/p/manifest.json")


def test_what_is_not_a_manifest_says_so() -> None:
    for data in (b"", b"[]", b'{"format": 1}', b"\xff"):
        with pytest.raises(StoreError, match="not a kbc publication manifest"):
            parse_manifest(data, "s3://b/p/manifest.json")


def test_a_publication_of_another_kbc_or_format_is_refused_saying_which() -> None:
    assert refused(manifest(), "s3://b/p") == ""
    assert "made by kbc 0.0.1" in refused(manifest(kbc="0.0.1"), "s3://b/p")
    assert "format 2" in refused(manifest(format=2), "s3://b/p")


def test_a_store_publishes_what_a_server_reads_only(tmp_path: Path) -> None:
    root = repo_factory(tmp_path)({"pkg/__init__.py": "", "pkg/a.py": '"""A."""\n\ndef f():\n    return 1\n'})
    with KnowledgeBase(root, components=Components.lexical()) as kb:
        kb.build(no_llm=True)
        kb.search("f", 3, "implementation")  # a server writes its gap log
    store = root / ".kbc"
    (store / "gen-0000").mkdir()
    (store / "gen-0000" / "facts.jsonl").write_text("")  # an older generation
    (store / "index" / "embedding.partial").write_bytes(b"x")
    files = store_files(store)
    generation = (store / "CURRENT").read_text().strip()
    assert {"state.json", "CURRENT", "index/lexical.sqlite", f"{generation}/facts.jsonl"} <= set(files)
    assert all(usable_path(f) for f in files)
    assert not [f for f in files if f.startswith(("cache/", "gen-0000")) or f.endswith(("lock", ".partial"))]
    assert "gaps.sqlite" not in files and files == sorted(files)


def test_a_database_is_copied_as_committed_while_a_writer_holds_a_transaction(tmp_path: Path) -> None:
    source = tmp_path / "a.sqlite"
    db = sqlite3.connect(source)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE t (x)")
    db.execute("INSERT INTO t VALUES (1)")
    db.commit()
    db.execute("INSERT INTO t VALUES (2)")  # under way, not committed
    copy_database(source, tmp_path / "copy" / "a.sqlite")
    db.rollback()
    db.close()
    copied = sqlite3.connect(tmp_path / "copy" / "a.sqlite")
    try:
        assert copied.execute("SELECT x FROM t").fetchall() == [(1,)]
        assert copied.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    finally:
        copied.close()
    assert not (tmp_path / "copy" / "a.sqlite-wal").exists()


def test_locations_are_buckets_and_prefixes() -> None:
    assert parse_location("s3://team-kbc/stores/") == Location("team-kbc", "stores")
    assert str(parse_location("s3://team-kbc").below("shop")) == "s3://team-kbc/shop"
    for bad in ("team-kbc/stores", "s3://", "s3://x/stores", "s3://Team/stores", "s3://team-kbc/../x"):
        with pytest.raises(KbcError):
            parse_location(bad)


def test_a_published_store_is_served_by_name_from_the_users_configuration(tmp_path: Path) -> None:
    errors: list[FieldError] = []
    assert repository_entry("shop=s3://team-kbc/stores/shop", "--repo", errors) == RepositoryEntry(
        "shop", published="s3://team-kbc/stores/shop"
    )
    assert repository_entry("s3://team-kbc/stores/api", "--repo", errors) == RepositoryEntry(
        "api", published="s3://team-kbc/stores/api"
    )
    assert not errors
    user = tmp_path / "config.toml"
    user.write_text(
        '[[repositories]]\nname = "shop"\nstore = "s3://team-kbc/stores/shop"\n', encoding="utf-8"
    )
    settings = load_settings(tmp_path, env={"KBC_CONFIG": str(user)})
    assert settings.repositories == (RepositoryEntry("shop", published="s3://team-kbc/stores/shop"),)
    user.write_text(
        '[[repositories]]\npath = "/src/shop"\nstore = "s3://team-kbc/stores/shop"\n', encoding="utf-8"
    )
    with pytest.raises(ConfigError, match="published store names a path or url too"):
        load_settings(tmp_path, env={"KBC_CONFIG": str(user)})
