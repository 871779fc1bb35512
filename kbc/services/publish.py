"""``kbc publish``: a repository's store uploaded to object storage as one publication
(:mod:`kbc.services.publication` says what one holds and how it is laid out).

The store is copied first, under its writer lock (and once no process embeds vectors into it),
each SQLite database through SQLite's backup API, so the copy is one build whole; the upload
reads the copy, not the live store, and the store is free again while it runs. Objects go up
first (those the bucket holds already are not sent again), the manifest last."""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from kbc import __version__
from kbc.domain.errors import StoreError
from kbc.domain.progress import Say
from kbc.domain.settings import Settings
from kbc.domain.workspace import name_of
from kbc.providers.objectstore import Bucket, parse_location
from kbc.services.publication import MANIFEST, OBJECTS, Entry, Manifest, sha256_of, store_files
from kbc.store.files import copy_database
from kbc.store.layout import CHROMA, index_dir, store_path
from kbc.store.lock import fill_lock, filling, writer_lock
from kbc.store.state import read_state, unfinished_build

DATABASES = (".sqlite", ".sqlite3")


@dataclass(frozen=True, slots=True)
class PublishSummary:
    location: str  # s3://bucket/prefix/<repository>
    manifest: Manifest
    uploaded: int  # files sent
    uploaded_bytes: int
    kept: int  # files the bucket held already
    seconds: float


def publish(
    root: Path,
    settings: Settings,
    url: str,
    *,
    store: Path | None = None,
    name: str = "",
    say: Say | None = None,
) -> PublishSummary:
    """Publish the store of the repository at ``root`` to ``url``/<name> (``name``: the
    repository's folder name by default)."""
    started = time.monotonic()
    tell = say or (lambda _message: None)
    location = parse_location(url).below(name or name_of(str(root.resolve())))
    store_root = store_path(root, settings, store)
    bucket = Bucket(location)
    with tempfile.TemporaryDirectory(prefix="kbc-publish-") as scratch:
        copy = Path(scratch) / "store"
        manifest = _snapshot(store_root, copy, settings, location.prefix.rsplit("/", 1)[-1], tell)
        uploaded = uploaded_bytes = kept = 0
        sent: set[str] = set()
        for entry in manifest.files:  # a store is a few dozen files: one look for each
            key = location.key(OBJECTS, entry.sha256)
            if entry.sha256 in sent or bucket.exists(key):
                kept += 1
                continue
            bucket.put_file(key, copy / entry.path)
            sent.add(entry.sha256)
            uploaded += 1
            uploaded_bytes += entry.size
        bucket.put_bytes(location.key(MANIFEST), manifest.to_json().encode())
    return PublishSummary(str(location), manifest, uploaded, uploaded_bytes, kept, time.monotonic() - started)


def _snapshot(store_root: Path, copy: Path, settings: Settings, repository: str, say: Say) -> Manifest:
    """A copy of the store's newest completed build in ``copy``, and its manifest."""
    if not store_root.is_dir():
        raise StoreError(f"no store at {store_root}", hint="run `kbc build` (or `kbc refresh`) first")
    if filling(store_root):
        say(f"kbc: waiting for the vectors being embedded into {store_root}")
    with fill_lock(store_root), writer_lock(store_root, settings.lock_timeout, say):
        state = read_state(store_root)
        if state is None or unfinished_build(store_root) is not None:
            raise StoreError(
                f"{store_root} holds no completed build"
                + (" (one was stopped part-way)" if state is not None else ""),
                hint="run `kbc refresh` (or `kbc build`) and publish once it has completed",
            )
        entries = []
        for relative in store_files(store_root):
            source, target = store_root / relative, copy / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            if relative.endswith(DATABASES):
                copy_database(source, target)
            else:
                shutil.copyfile(source, target)
            entries.append(Entry(relative, sha256_of(target), target.stat().st_size))
        vectors = _vectors(store_root, settings)
    return Manifest(
        repository=repository,
        commit=state.commit,
        kbc=__version__,
        versions=_versions(copy),
        files=tuple(entries),
        built=state.finished,
        published=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        vectors=vectors,
    )


def _vectors(store_root: Path, settings: Settings) -> str:
    from kbc.analyzers.gitrepo import without_password
    from kbc.services.embedding import waits_for_vectors

    if settings.chroma_url:
        return without_password(settings.chroma_url)
    if waits_for_vectors(store_root):
        return "pending"
    return "store" if (index_dir(store_root) / CHROMA).is_dir() else ""


def _versions(copy: Path) -> dict[str, str]:
    """The formats the store was written in: its analyzers', its facts store's, its index's."""
    import json

    from kbc.index.build import CHUNKER_VERSION
    from kbc.index.lexical import SCHEMA_VERSION
    from kbc.index.tokens import TOKENS_VERSION
    from kbc.store.facts_store import STORE_FORMAT

    found = {
        "store": str(STORE_FORMAT),
        "lexical": str(SCHEMA_VERSION),
        "chunker": CHUNKER_VERSION,
        "tokens": str(TOKENS_VERSION),
    }
    pointer = copy / "CURRENT"
    if pointer.is_file():
        try:
            generation = json.loads((copy / pointer.read_text().strip() / "manifest.json").read_text())
            found.update({str(k): str(v) for k, v in generation.get("versions", {}).items() if k != "kbc"})
        except (OSError, ValueError, AttributeError):
            pass
    return dict(sorted(found.items()))
