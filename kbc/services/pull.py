"""A server's copy of a publication: the newest one pulled from object storage into a local
cache, each file checked against the manifest's checksum, the copy put in place whole (a folder
named by the publication's id appears only once every file is in it and checked), so a
publication killed half-way, or a damaged object, is never served.

``<cache>/<id>/`` holds one publication's store (and ``publication.json``, its manifest); a
file a copy already on disk holds with the same checksum is copied from it, not downloaded
again. Copies no process serves any more are removed, but the newest few."""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path

from kbc.domain.errors import StoreError
from kbc.providers.objectstore import Bucket
from kbc.services.publication import (
    MANIFEST,
    OBJECTS,
    RECORD,
    Manifest,
    parse_manifest,
    refused,
    sha256_of,
)
from kbc.store.lock import remove_unless_held

KEPT = 2  # copies kept on disk beside the one served, for a restart that cannot reach the store


class Refused(StoreError):
    """A publication this kbc does not serve (another version, another format)."""


def newest(bucket: Bucket) -> Manifest | None:
    """The newest complete publication's manifest (None: nothing published there yet)."""
    data = bucket.get_bytes(bucket.location.key(MANIFEST))
    if data is None:
        return None
    manifest = parse_manifest(data, f"{bucket.location}/{MANIFEST}")
    why = refused(manifest, str(bucket.location))
    if why:
        raise Refused(why, hint="serve it with the kbc that published it, or publish again with this one")
    return manifest


def local_copies(cache: Path) -> list[tuple[Manifest, Path]]:
    """The complete copies in ``cache``, newest first (by when they were pulled)."""
    found = []
    for folder in cache.iterdir() if cache.is_dir() else ():
        record = folder / RECORD
        if folder.name.startswith(".") or not record.is_file():
            continue
        try:
            manifest = parse_manifest(record.read_bytes(), str(record))
        except (OSError, StoreError):
            continue
        if manifest.id == folder.name and not refused(manifest, str(folder)):
            found.append((record.stat().st_mtime_ns, manifest, folder))
    return [(m, f) for _, m, f in sorted(found, key=lambda t: t[0], reverse=True)]


def pull(bucket: Bucket, manifest: Manifest, cache: Path) -> Path:
    """The folder holding ``manifest``'s publication, pulled into ``cache`` unless it is there."""
    final = cache / manifest.id
    if (final / RECORD).is_file():
        return final
    known = {e.sha256: folder / e.path for m, folder in local_copies(cache) for e in m.files}
    partial = cache / f".{manifest.id}.{os.getpid()}.{secrets.token_hex(4)}"
    try:
        for entry in manifest.files:
            target = partial / entry.path
            target.parent.mkdir(parents=True, exist_ok=True)
            have = known.get(entry.sha256)
            if have is not None and _copied(have, target) and _matches(target, entry.size, entry.sha256):
                continue  # a copy on disk held it (unchanged since: a served database may not be)
            if not bucket.download(bucket.location.key(OBJECTS, entry.sha256), target):
                raise StoreError(
                    f"{bucket.location}: publication {manifest.id} names {entry.path}, whose object "
                    f"{entry.sha256[:12]} is missing",
                    hint="publish again with `kbc publish`",
                )
            if not _matches(target, entry.size, entry.sha256):
                raise StoreError(
                    f"{bucket.location}: {entry.path} of publication {manifest.id} does not match its "
                    "checksum",
                    hint="publish again with `kbc publish`; objects are never changed in place",
                )
        (partial / RECORD).write_text(manifest.to_json(), encoding="utf-8")
        try:
            partial.rename(final)
        except OSError:  # another process on this machine put the same copy in place first
            if not (final / RECORD).is_file():
                raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return final


def _copied(source: Path, target: Path) -> bool:
    try:
        shutil.copyfile(source, target)
    except OSError:
        return False
    return True


def _matches(path: Path, size: int, sha256: str) -> bool:
    return path.stat().st_size == size and sha256_of(path) == sha256


def sweep(cache: Path, serving: Path) -> None:
    """Remove the copies no process serves, but ``serving`` and the newest :data:`KEPT` others."""
    others = [folder for _, folder in local_copies(cache) if folder != serving]
    for folder in others[KEPT:]:
        remove_unless_held(folder)
