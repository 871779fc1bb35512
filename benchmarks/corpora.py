"""The one place the benchmarks fetch a corpus, keep it and check it:

- from PyPI's simple index (PEP 691 JSON): a source distribution (:func:`sdist_archive`,
  unpacked by :func:`sdist`) or a pure-Python wheel (:func:`wheel_archive`, :func:`wheel`),
  checked against the sha256 the index gives;
- from npm's registry: a package's tarball (:func:`npm_archive`), checked against the sha512
  of its ``integrity`` (else its sha1 ``shasum``);
- from Debian's archive: a package (:func:`deb_archive`), its address and SHA256 read from apt's
  signed index (``apt-get download --print-uris``);
- a checkout of a mirrored git repository, ``MIRROR_ROOT/<name>/repo`` (:func:`mirrored`).

Each download is kept once in the caller's folder (:func:`cached`): written to ``NAME.partial``,
checked, then renamed, so a killed run never leaves half a file under the archive's name; the
sha256 of what was checked is recorded beside it (``NAME.sha256``) and the archive is checked
against that record, without the network, each time it is used again. An archive that does not
match is refused (:class:`FetchError`), never used. :func:`unpack` unpacks into
``TARGET.partial`` and renames it: tarballs (a Debian package's ``data.tar`` too) with the
``data`` filter (no link or path out of the tree, no devices), zip files by :mod:`zipfile`
(which keeps every path inside).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

INDEX = "https://pypi.org/simple/{}/"
NPM = "https://registry.npmjs.org/{}/{}"
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar", ".zip")
APT_HASHES = {"SHA256": "sha256", "SHA512": "sha512", "SHA1": "sha1", "MD5SUM": "md5"}
BLOCK = 1 << 20


class FetchError(Exception):
    """A corpus that could not be fetched or was refused: the message says which and why."""


class Remote(NamedTuple):
    """Where an archive is downloaded from, and the digest its registry publishes for it."""

    url: str
    algorithm: str  # a name hashlib knows: sha256, sha512, sha1
    digest: str  # hexadecimal; empty when the registry publishes none
    publisher: str  # who published the digest, for messages: "the index", "npm's registry"


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def digest_of(path: Path, algorithm: str = "sha256") -> str:
    hashed = hashlib.new(algorithm)
    with path.open("rb") as fh:
        while block := fh.read(BLOCK):
            hashed.update(block)
    return hashed.hexdigest()


def record_of(archive: Path) -> Path:
    """The file beside ``archive`` holding the sha256 it had when it was downloaded and checked."""
    return archive.with_name(archive.name + ".sha256")


def write_record(archive: Path, sha256: str) -> None:
    record = record_of(archive)
    partial = record.with_name(record.name + ".partial")
    partial.write_text(f"{sha256}  {archive.name}\n")
    partial.replace(record)


def check(archive: Path, algorithm: str, expected: str, by: str) -> Path:
    """``archive`` if its digest is ``expected``; else refused with both digests."""
    found = digest_of(archive, algorithm)
    if found != expected.lower():
        raise FetchError(
            f"{archive}: {algorithm} {found} does not match {expected}, {by}: refused"
            " (delete it to download it again)"
        )
    return archive


def save(stream: BinaryIO, archive: Path, remote: Remote) -> Path:
    """``stream`` kept as ``archive``: written to ``archive.partial`` (removed if anything goes
    wrong), checked against ``remote``'s published digest, its sha256 recorded, then renamed."""
    partial = archive.with_name(archive.name + ".partial")
    archive.parent.mkdir(parents=True, exist_ok=True)
    published = hashlib.new(remote.algorithm)
    sha256 = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            while block := stream.read(BLOCK):
                out.write(block)
                published.update(block)
                sha256.update(block)
        if remote.digest and published.hexdigest() != remote.digest.lower():
            raise FetchError(
                f"{archive.name} from {remote.url}: {remote.algorithm} {published.hexdigest()} does not "
                f"match {remote.digest}, published by {remote.publisher}: refused"
            )
        write_record(archive, sha256.hexdigest())
        partial.replace(archive)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return archive


def cached(archive: Path, locate: Callable[[], Remote], note: str = "") -> Path:
    """``archive``, downloaded once and checked. ``locate`` says where from and with which
    published digest; it is called only when needed, so an archive kept with its record needs no
    network. One kept without a record (by an older run) is checked against the published digest
    and recorded. ``note``, if given, goes to stderr before a download."""
    record = record_of(archive)
    if archive.is_file() and record.is_file():
        expected = record.read_text().split()[0]
        return check(archive, "sha256", expected, "the sha256 recorded when it was downloaded")
    remote = locate()
    if archive.is_file():
        if remote.digest:
            check(archive, remote.algorithm, remote.digest, f"published by {remote.publisher}")
        write_record(archive, digest_of(archive))
        return archive
    if note:
        print(note, file=sys.stderr)
    try:
        with urllib.request.urlopen(remote.url, timeout=300) as response:
            return save(response, archive, remote)
    except OSError as exc:
        raise FetchError(f"{remote.url}: {exc}") from exc


def get_json(url: str, accept: str = "application/json") -> Any:
    request = urllib.request.Request(url, headers={"Accept": accept})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.load(response)
    except OSError as exc:
        raise FetchError(f"{url}: {exc}") from exc


def index_files(name: str) -> list[dict[str, Any]]:
    """The files of ``name`` in PyPI's simple index (PEP 691 JSON)."""
    found = get_json(INDEX.format(normalized(name)), "application/vnd.pypi.simple.v1+json")
    return list(found["files"])


def indexed(entry: dict[str, Any]) -> Remote:
    return Remote(entry["url"], "sha256", entry.get("hashes", {}).get("sha256", ""), "the index")


def sdist_name(filename: str) -> tuple[str, str] | None:
    """The name and version a source distribution's file name gives (``Jinja2-3.1.4.tar.gz``)."""
    suffix = next((s for s in ARCHIVE_SUFFIXES if filename.endswith(s)), None)
    if suffix is None:
        return None
    name, _, version = filename[: -len(suffix)].rpartition("-")
    return (name, version) if name and version else None


def sdist_of(name: str, version: str) -> dict[str, Any]:
    """The source distribution's entry in the simple index."""
    files = index_files(name)
    want = normalized(f"{name}-{version}")
    for suffix in ARCHIVE_SUFFIXES:
        for entry in files:
            filename = entry["filename"]
            if filename.endswith(suffix) and normalized(filename[: -len(suffix)]) == want:
                return dict(entry)
    raise FetchError(f"{name} {version}: no source distribution in the index")


def latest_version(name: str) -> str:
    """The newest version of ``name`` with a source distribution in the index, as ``pip download
    --no-binary :all:`` picks it: not a pre-release, not yanked, for this Python."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    python = ".".join(map(str, sys.version_info[:3]))
    best: tuple[Version, str] | None = None
    for entry in index_files(name):
        parsed = sdist_name(entry["filename"])
        if parsed is None or entry.get("yanked") or normalized(parsed[0]) != normalized(name):
            continue
        try:
            version = Version(parsed[1])
            fits = python in SpecifierSet(entry.get("requires-python") or "")
        except (InvalidVersion, InvalidSpecifier):
            continue
        if fits and not version.is_prerelease and (best is None or version > best[0]):
            best = (version, parsed[1])
    if best is None:
        raise FetchError(f"{name}: no source distribution in the index")
    return best[1]


def find_archive(folder: Path, name: str, version: str | None = None) -> Path | None:
    """The source distribution of ``name`` (of ``version``, or any) already in ``folder``, its file
    name normalized as PyPI's spellings differ: ``Jinja2-3.1.4.tar.gz``, ``pre_commit-4.0.1.tar.gz``."""
    if not folder.is_dir():
        return None
    for path in sorted(folder.iterdir()):
        parsed = sdist_name(path.name)
        if parsed and normalized(parsed[0]) == normalized(name) and version in (None, parsed[1]):
            return path
    return None


def sdist_archive(name: str, version: str | None, folder: Path, *, announce: str = "") -> Path:
    """The source distribution of ``name`` ``version`` in ``folder``, fetched once from the index and
    checked by its sha256. Without a version: the one kept in ``folder``, else the newest."""
    note = f"fetching {name} {version} ({announce})" if announce else ""
    found = find_archive(folder, name, version)
    if found is not None:
        kept = version or (sdist_name(found.name) or ("", ""))[1]
        return cached(found, lambda: indexed(sdist_of(name, kept)), note)
    entry = sdist_of(name, version or latest_version(name))
    return cached(folder / entry["filename"], lambda: indexed(entry), note)


def sdist(name: str, version: str, work: Path) -> Path:
    """The unpacked sources (one top folder) at ``WORK/src/NAME-VERSION``, the archive kept in
    ``WORK/archives``."""
    target = work / "src" / f"{normalized(name)}-{version}"
    if target.exists():
        return target
    return unpack(sdist_archive(name, version, work / "archives"), target, top=True)


def is_pure_wheel(filename: str, name: str, version: str) -> bool:
    """Whether ``filename`` is a pure-Python wheel (``py3-none-any``) of ``name`` ``version``."""
    parts = filename.removesuffix(".whl").split("-")
    return (
        filename.endswith(".whl")
        and len(parts) >= 5
        and normalized(parts[0]) == normalized(name)
        and parts[1] == version
        and parts[-2:] == ["none", "any"]
        and "py3" in parts[-3].split(".")
    )


def wheel_archive(name: str, version: str, folder: Path) -> Path:
    """The pure-Python wheel of ``name`` ``version`` in ``folder``, fetched once from the index and
    checked by its sha256."""
    kept = sorted(folder.glob("*.whl")) if folder.is_dir() else []
    found = next((p for p in kept if is_pure_wheel(p.name, name, version)), None)

    def entry() -> dict[str, Any]:
        for file in index_files(name):
            if is_pure_wheel(file["filename"], name, version):
                return file
        raise FetchError(f"{name}-{version}-py3-none-any.whl: not in the index")

    if found is not None:
        return cached(found, lambda: indexed(entry()))
    chosen = entry()
    return cached(folder / chosen["filename"], lambda: indexed(chosen))


def wheel(name: str, version: str, work: Path) -> Path:
    """A pure-Python wheel's files at ``WORK/src/NAME-VERSION-wheel``, the wheel kept in
    ``WORK/archives``."""
    target = work / "src" / f"{normalized(name)}-{version}-wheel"
    if target.exists():
        return target
    return unpack(wheel_archive(name, version, work / "archives"), target)


def npm_archive(name: str, version: str, folder: Path, *, announce: str = "") -> Path:
    """The tarball of ``name`` ``version`` in ``folder`` (named as ``npm pack`` names it:
    ``capacitor-android-8.6.0.tgz``), fetched once and checked by the registry's integrity."""

    def locate() -> Remote:
        dist = get_json(NPM.format(urllib.parse.quote(name, safe="@"), version))["dist"]
        integrity = next((i for i in dist.get("integrity", "").split() if i.startswith("sha512-")), "")
        if integrity:
            digest = base64.b64decode(integrity.removeprefix("sha512-")).hex()
            return Remote(dist["tarball"], "sha512", digest, "npm's registry")
        return Remote(dist["tarball"], "sha1", dist.get("shasum", ""), "npm's registry")

    note = f"fetching {name} {version} ({announce})" if announce else ""
    return cached(folder / f"{name.lstrip('@').replace('/', '-')}-{version}.tgz", locate, note)


def run(command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """``command``'s output; FetchError saying why when it is missing, hangs or fails."""
    try:
        done = subprocess.run(
            command, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=900
        )
    except FileNotFoundError as exc:
        raise FetchError(f"{command[0]} is not installed (needed for: {' '.join(command)})") from exc
    except subprocess.TimeoutExpired as exc:
        raise FetchError(f"{' '.join(command)}: no answer in {exc.timeout:.0f} s") from exc
    if done.returncode != 0:
        detail = " / ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        raise FetchError(f"{' '.join(command)} exited {done.returncode}: {detail}")
    return done.stdout


def apt_file(name: str, version: str) -> tuple[str, Remote]:
    """The package's file name, address and digest, from apt's index (whose signature apt checked
    when it was updated)."""
    for line in run(["apt-get", "download", "--print-uris", f"{name}={version}"]).splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[3].partition(":")[0].upper() in APT_HASHES:
            kind, _, digest = parts[3].partition(":")
            return parts[1], Remote(parts[0].strip("'"), APT_HASHES[kind.upper()], digest, "apt's index")
    raise FetchError(f"{name} {version}: apt's index names no file for it (apt-get update?)")


def deb_archive(name: str, version: str, folder: Path, *, announce: str = "") -> Path:
    """The Debian package ``name`` ``version`` in ``folder``, fetched once and checked by the
    digest of apt's index."""
    note = f"fetching {name} {version} ({announce})" if announce else ""
    kept = sorted(folder.glob(f"{name}_{version.replace(':', '%3a')}_*.deb"))
    if kept:
        return cached(kept[0], lambda: apt_file(name, version)[1], note)
    filename, remote = apt_file(name, version)
    return cached(folder / filename, lambda: remote, note)


def deb_data(archive: Path) -> io.BytesIO:
    """The ``data.tar`` of a Debian package (an ``ar`` archive)."""
    data = archive.read_bytes()
    if not data.startswith(b"!<arch>\n"):
        raise tarfile.ReadError(f"{archive.name}: not a Debian package")
    at = 8
    while at + 60 <= len(data):
        member, size = data[at : at + 16].decode().strip().rstrip("/"), int(data[at + 48 : at + 58])
        if member.startswith("data.tar"):
            return io.BytesIO(data[at + 60 : at + 60 + size])
        at += 60 + size + size % 2
    raise tarfile.ReadError(f"{archive.name}: no data.tar in it")


def unpack(archive: Path, target: Path, *, top: bool = False) -> Path:
    """The archive's files at ``target`` (replaced), unpacked in ``target.partial`` first; with
    ``top``, a lone top folder becomes ``target``. A link or path out of the tree is refused
    (``tarfile.FilterError``), as is any unreadable archive (``OSError``, ``tarfile.TarError``,
    ``zipfile.BadZipFile``); nothing is left then."""
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        if archive.name.endswith((".zip", ".whl")):
            with zipfile.ZipFile(archive) as zipped:
                zipped.extractall(partial)
        else:
            deb = archive.name.endswith(".deb")
            with tarfile.open(fileobj=deb_data(archive)) if deb else tarfile.open(archive) as tarred:
                tarred.extractall(partial, filter="data")
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    inside = list(partial.iterdir())
    source = inside[0] if top and len(inside) == 1 and inside[0].is_dir() else partial
    shutil.rmtree(target, ignore_errors=True)
    source.rename(target)
    if source != partial:
        partial.rmdir()
    return target


def mirrored(name: str, ref: str, target: Path) -> Path:
    """``ref`` of the mirror ``MIRROR_ROOT/<name>/repo``, checked out once at ``target`` (in
    ``target.partial`` first)."""
    mirror = Path(os.environ.get("MIRROR_ROOT", "")) / name / "repo"
    if not mirror.is_dir():
        raise FetchError(f"set MIRROR_ROOT to the folder holding {name}/repo ({mirror} missing)")
    if not target.exists():
        partial = target.with_name(target.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.parent.mkdir(parents=True, exist_ok=True)
        run(["git", "clone", "-q", "--no-checkout", str(mirror), str(partial)])
        run(["git", "checkout", "-q", ref], cwd=partial)
        partial.rename(target)
    return target
