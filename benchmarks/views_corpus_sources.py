"""The corpus of ``benchmarks/views_corpus.py`` made ready to build: each package's sdist
fetched from PyPI's simple index and checked by its sha256 (once, by :mod:`corpora`), unpacked
and committed to a git repository of its own, and the :class:`Failure` of a stage that ends
one package's row.
"""

from __future__ import annotations

import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

import corpora
from corpora import normalized as normalized  # views_corpus takes it from here


class Failure(Exception):
    """A stage of one package that did not work: it ends that package's row, not the run."""

    def __init__(self, stage: str, detail: str) -> None:
        super().__init__(f"{stage}: {detail}")
        self.stage = stage
        self.detail = detail


def parse_spec(spec: str) -> tuple[str, str]:
    name, sep, version = spec.partition("==")
    if not sep or not name.strip() or not version.strip():
        raise SystemExit(f"{spec!r}: expected NAME==VERSION")
    return name.strip(), version.strip()


def tail(text: str, lines: int = 3) -> str:
    return " / ".join(line.strip() for line in text.strip().splitlines()[-lines:])[-400:]


def download(name: str, version: str, folder: Path) -> Path:
    """The package's sdist in ``folder``, fetched once and checked (:func:`corpora.sdist_archive`)."""
    try:
        return corpora.sdist_archive(name, version, folder)
    except (corpora.FetchError, OSError) as exc:
        raise Failure("download", str(exc)) from exc


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
        corpora.unpack(archive, target, top=True)
    except (OSError, tarfile.TarError, zipfile.BadZipFile) as exc:
        raise Failure("unpack", f"{type(exc).__name__}: {exc}") from exc
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
