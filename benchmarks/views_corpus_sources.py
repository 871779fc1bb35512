"""The corpus of ``benchmarks/views_corpus.py`` made ready to build: each package's sdist
fetched with ``pip download`` (once), unpacked and committed to a git repository of its own,
and the :class:`Failure` of a stage that ends one package's row.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from common import extract

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar", ".zip")


class Failure(Exception):
    """A stage of one package that did not work: it ends that package's row, not the run."""

    def __init__(self, stage: str, detail: str) -> None:
        super().__init__(f"{stage}: {detail}")
        self.stage = stage
        self.detail = detail


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_spec(spec: str) -> tuple[str, str]:
    name, sep, version = spec.partition("==")
    if not sep or not name.strip() or not version.strip():
        raise SystemExit(f"{spec!r}: expected NAME==VERSION")
    return name.strip(), version.strip()


def tail(text: str, lines: int = 3) -> str:
    return " / ".join(line.strip() for line in text.strip().splitlines()[-lines:])[-400:]


def find_sdist(folder: Path, name: str, version: str) -> Path | None:
    """The sdist of ``name`` ``version`` already in ``folder`` (its file name normalized as
    PyPI's spellings differ: ``Jinja2-3.1.4.tar.gz``, ``pre_commit-4.0.1.tar.gz``)."""
    if not folder.is_dir():
        return None
    for path in sorted(folder.iterdir()):
        suffix = next((s for s in ARCHIVE_SUFFIXES if path.name.endswith(s)), None)
        if suffix is None:
            continue
        stem_name, _, stem_version = path.name[: -len(suffix)].rpartition("-")
        if normalized(stem_name) == normalized(name) and stem_version == version:
            return path
    return None


def download(name: str, version: str, folder: Path) -> Path:
    found = find_sdist(folder, name, version)
    if found:
        return found
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--no-binary",
            ":all:",
            "--disable-pip-version-check",
            "-q",
            f"{name}=={version}",
            "-d",
            str(folder),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    found = find_sdist(folder, name, version)
    if done.returncode != 0 or found is None:
        raise Failure("download", tail(done.stderr or done.stdout) or f"exit {done.returncode}")
    return found


def git(tree: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "safe.directory=*", "-c", "core.autocrlf=false", *args],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise Failure("git", f"git {' '.join(args)}: {tail(done.stderr)}")
    return done.stdout


def unpack(archive: Path, target: Path) -> Path:
    """The sources in ``target`` (its sdist's top folder), committed to a git repository of
    their own; reused when a previous run left one there."""
    if (target / ".git").is_dir() and git(target, "rev-parse", "--verify", "-q", "HEAD").strip():
        return target
    shutil.rmtree(target, ignore_errors=True)
    try:
        partial = extract(archive, target)
    except (OSError, tarfile.TarError, zipfile.BadZipFile) as exc:
        raise Failure("unpack", f"{type(exc).__name__}: {exc}") from exc
    inside = list(partial.iterdir())
    if len(inside) == 1 and inside[0].is_dir():
        inside[0].rename(target)
        partial.rmdir()
    else:
        partial.rename(target)
    git(target, "init", "-q", "-b", "main")
    git(target, "add", "-A")
    git(
        target,
        "-c",
        "user.email=a@b",
        "-c",
        "user.name=x",
        "-c",
        "commit.gpgsign=false",
        "commit",
        "-qm",
        "src",
    )
    return target
