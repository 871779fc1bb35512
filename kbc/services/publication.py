"""A store published to object storage: what a publication holds and how it is laid out.

Under ``s3://bucket/prefix/<repository>/``::

    objects/<sha256>   each file of the store, named by its content (an unchanged file is
                       uploaded once, whatever publication holds it)
    manifest.json      the newest publication: kbc's version, the store's formats, the commit,
                       and every file's path, size and checksum; written last, in one request,
                       so a reader sees the previous publication or this one, never half of one

A publication holds what a server reads: the build record, the live facts generation, the
views and the index (the lexical index and, when the store holds them, its local vectors). Not
the caches a build keeps for itself, the gap log a server writes, nor the locks.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from kbc import __version__
from kbc.domain.errors import StoreError

FORMAT = 1  # of the manifest and of the layout above
MANIFEST = "manifest.json"
OBJECTS = "objects"
RECORD = "publication.json"  # beside a pulled store's files: the manifest it was pulled from
TOP_FILES = ("state.json", "CURRENT", "knowledge.json")
FOLDERS = ("views", "index")
LEFT_OUT = re.compile(r"(-wal|-shm|-journal|\.partial|\.tmp[^/]*)$")
_PATH = re.compile(r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$")
_SHA = re.compile(r"^[0-9a-f]{64}$")
CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class Entry:
    path: str  # relative to the store, with /
    sha256: str
    size: int


@dataclass(frozen=True, slots=True)
class Manifest:
    repository: str
    commit: str
    kbc: str
    versions: dict[str, str]
    files: tuple[Entry, ...]
    built: float = 0.0  # when the build it holds completed (Unix time)
    published: str = ""  # when it was published (ISO 8601, UTC)
    vectors: str = ""  # where its vectors are: "store" (in it), "" (none: lexical), or a Chroma URL
    format: int = FORMAT

    @property
    def id(self) -> str:
        """What the publication holds, as one digest: the same files give the same id."""
        text = "\n".join(f"{e.path}\0{e.sha256}" for e in self.files)
        return hashlib.sha256(text.encode()).hexdigest()[:24]

    def to_json(self) -> str:
        data = {
            "format": self.format,
            "id": self.id,
            "repository": self.repository,
            "commit": self.commit,
            "kbc": self.kbc,
            "versions": self.versions,
            "built": self.built,
            "published": self.published,
            "vectors": self.vectors,
            "files": [{"path": e.path, "sha256": e.sha256, "size": e.size} for e in self.files],
        }
        return json.dumps(data, indent=1, sort_keys=True)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def parse_manifest(data: bytes, where: str) -> Manifest:
    """A manifest read from ``where``; one that is not a manifest kbc can read says why."""
    try:
        raw: Any = json.loads(data)
        files = tuple(Entry(str(f["path"]), str(f["sha256"]), int(f["size"])) for f in raw["files"])
        found = Manifest(
            repository=str(raw["repository"]),
            commit=str(raw["commit"]),
            kbc=str(raw["kbc"]),
            versions={str(k): str(v) for k, v in dict(raw["versions"]).items()},
            files=files,
            built=float(raw.get("built", 0.0)),
            published=str(raw.get("published", "")),
            vectors=str(raw.get("vectors", "")),
            format=int(raw["format"]),
        )
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise StoreError(
            f"{where}: not a kbc publication manifest ({type(exc).__name__}: {exc})",
            hint="publish again with `kbc publish`",
        ) from None
    for entry in found.files:
        if not usable_path(entry.path) or not _SHA.match(entry.sha256) or entry.size < 0:
            raise StoreError(
                f"{where}: names a file {entry.path[:100]!r} that a store does not hold",
                hint="publish again with `kbc publish`; a manifest is never edited by hand",
            )
    return found


def usable_path(path: str) -> bool:
    """Whether a path a manifest names can be a file of a store (never outside it)."""
    if not _PATH.match(path):
        return False
    parts = PurePosixPath(path).parts
    if any(part in (".", "..") for part in parts):
        return False
    if len(parts) == 1:
        return parts[0] in TOP_FILES
    return parts[0] in FOLDERS or parts[0].startswith("gen-")


def refused(manifest: Manifest, where: str) -> str:
    """Why this kbc cannot serve the publication ("" when it can): made by another kbc version
    or in another format."""
    if manifest.format != FORMAT:
        return (
            f"{where}: publication {manifest.id} is in format {manifest.format}; "
            f"this kbc reads format {FORMAT}"
        )
    if manifest.kbc != __version__:
        return (
            f"{where}: publication {manifest.id} was made by kbc {manifest.kbc}; this server is kbc "
            f"{__version__} and serves only publications of its own version"
        )
    return ""


def store_files(store: Path) -> list[str]:
    """The files of ``store`` a publication holds (relative, with /), sorted."""
    found = [name for name in TOP_FILES if (store / name).is_file()]
    generation = (
        (store / "CURRENT").read_text(encoding="utf-8").strip() if (store / "CURRENT").is_file() else ""
    )
    folders = [*FOLDERS, *([generation] if generation.startswith("gen-") else [])]
    for folder in folders:
        base = store / folder
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            relative = path.relative_to(store).as_posix()
            if path.is_file() and not path.is_symlink() and not LEFT_OUT.search(relative):
                found.append(relative)
    return sorted(found)
