"""A polyglot corpus: one git repository of real TypeScript, Go, Rust, Java and Python code side by side.

    python benchmarks/polyglot_corpus.py --out /tmp/polyglot [--cache DIR]

Each folder of OUT holds the sources of one package at a pinned version (:data:`SOURCES`),
fetched from a package registry by :mod:`corpora` and checked against the digest the registry
publishes:

- ``ts/``: mobx 6.13.5 from npm (its tarball, by its sha512 integrity), its TypeScript sources
  (``src/**/*.ts``);
- ``go/``: cobra 1.6.1 from Debian's ``golang-github-spf13-cobra-dev`` 1.6.1-1 (its address and
  SHA256 from apt's index, ``apt-get download --print-uris``), the Go sources under
  ``usr/share/gocode/src``;
- ``rust/``: the semver 1.0.14 crate from Debian's ``librust-semver-dev`` 1.0.14-1, under
  ``usr/share/cargo/registry``;
- ``java/``: Capacitor's Android library from npm's ``@capacitor/android`` 8.6.0, the Java
  sources of its ``capacitor`` module (``src/main/java/com/getcapacitor/...``);
- ``python/``: tomli 2.2.1, its sdist from PyPI's simple index (by its sha256).

Some 200 files in all. Downloads are kept in the cache folder (``--cache``, by default
``polyglot-cache`` beside OUT), each with its sha256 recorded, and reused on the next run once
checked against it, so only the first run needs the registries. OUT is then laid out anew (a
folder that is not such a corpus is never touched), with a ``POLYGLOT.md`` saying where each
folder comes from, and committed to a fresh git repository with a fixed author and date, so
that the same sources give the same commit. A corpus already committed from the same sources is
left as it is (its ``.kbc`` store too).

The golden file ``benchmarks/golden/polyglot.yaml`` asks its questions of this corpus:

    kbc build /tmp/polyglot --no-llm
    kbc eval --golden benchmarks/golden/polyglot.yaml --repo /tmp/polyglot \\
        --use-case implementation --use-case architecture
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tarfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import corpora

MARKER = "POLYGLOT.md"
AUTHOR = ("kbc benchmarks", "benchmarks@kbc.invalid")
DATE = "2025-01-01T00:00:00+00:00"


@dataclass(frozen=True)
class Source:
    """One package: where it comes from, and which of its files go to ``OUT/folder``."""

    folder: str  # under OUT
    registry: str  # npm, deb or pypi
    name: str
    version: str
    root: str  # the folder of the unpacked package copied as OUT/folder
    keep: tuple[str, ...]  # glob patterns, relative to root, of the files kept
    note: str  # what it is, for POLYGLOT.md


SOURCES: tuple[Source, ...] = (
    Source(
        "ts",
        "npm",
        "mobx",
        "6.13.5",
        "package",
        ("package.json", "README.md", "LICENSE", "src/**/*.ts"),
        "mobx 6.13.5, reactive state management (TypeScript)",
    ),
    Source(
        "go",
        "deb",
        "golang-github-spf13-cobra-dev",
        "1.6.1-1",
        "usr/share/gocode/src/github.com/spf13/cobra",
        ("go.mod", "**/*.go"),
        "cobra 1.6.1, a library for command-line programs (Go)",
    ),
    Source(
        "rust",
        "deb",
        "librust-semver-dev",
        "1.0.14-1",
        "usr/share/cargo/registry/semver-1.0.14",
        ("Cargo.toml", "README.md", "build.rs", "src/**/*.rs", "tests/**/*.rs", "benches/**/*.rs"),
        "the semver 1.0.14 crate, Cargo's semantic versions (Rust)",
    ),
    Source(
        "java",
        "npm",
        "@capacitor/android",
        "8.6.0",
        "package/capacitor",
        ("build.gradle", "src/main/AndroidManifest.xml", "src/main/java/**/*.java"),
        "Capacitor's Android runtime: the native bridge between a web view and plugins (Java)",
    ),
    Source(
        "python",
        "pypi",
        "tomli",
        "2.2.1",
        "tomli-2.2.1",
        ("pyproject.toml", "README.md", "LICENSE", "src/**/*.py"),
        "tomli 2.2.1, a TOML parser (Python)",
    ),
)


class CorpusError(Exception):
    """A step that failed: the message says which and why."""


def run(command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    try:
        return corpora.run(command, cwd, env)
    except corpora.FetchError as exc:
        raise CorpusError(str(exc)) from exc


FETCHERS: dict[str, Callable[..., Path]] = {
    "npm": corpora.npm_archive,
    "deb": corpora.deb_archive,
    "pypi": corpora.sdist_archive,
}


def download(source: Source, cache: Path) -> Path:
    """The package's archive in ``cache/REGISTRY``, fetched once from its registry and checked
    against the digest the registry publishes (:mod:`corpora`)."""
    try:
        fetch = FETCHERS[source.registry]
        return fetch(source.name, source.version, cache / source.registry, announce=source.registry)
    except corpora.FetchError as exc:
        raise CorpusError(str(exc)) from exc


def unpack(archive: Path, target: Path) -> None:
    """The archive's files in ``target`` (replaced)."""
    try:
        corpora.unpack(archive, target)
    except (OSError, tarfile.TarError) as exc:
        raise CorpusError(f"{archive}: cannot unpack ({type(exc).__name__}: {exc})") from exc


def kept_files(root: Path, patterns: tuple[str, ...]) -> list[Path]:
    """The files under ``root`` matching ``patterns``, relative to it; dot-files never."""
    found = {path.relative_to(root) for pattern in patterns for path in root.glob(pattern) if path.is_file()}
    return sorted(path for path in found if not any(part.startswith(".") for part in path.parts))


def lay_out(source: Source, cache: Path, out: Path) -> int:
    """Copy the package's kept files into ``OUT/folder``; the number copied."""
    unpacked = cache / "unpacked" / source.folder
    unpack(download(source, cache), unpacked)
    root = unpacked / source.root
    files = kept_files(root, source.keep)
    if not files:
        raise CorpusError(
            f"{source.name} {source.version}: no files matching {source.keep} under {source.root}"
        )
    for relative in files:
        target = out / source.folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / relative, target)  # contents only: every file 0644, whatever the archive said
    shutil.rmtree(unpacked)
    return len(files)


def marker_text() -> str:
    rows = "\n".join(
        f"| `{s.folder}/` | {s.registry} | `{s.name}` | {s.version} | {s.note} |" for s in SOURCES
    )
    return (
        "# A polyglot corpus\n\n"
        "Real code of several languages side by side, for kbc's retrieval benchmarks\n"
        "(`benchmarks/golden/polyglot.yaml`). Made by `benchmarks/polyglot_corpus.py`;\n"
        "each folder holds the sources of one package, as its registry ships them.\n\n"
        "| folder | registry | package | version | what |\n| --- | --- | --- | --- | --- |\n"
        f"{rows}\n"
    )


def git(out: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_DATE=DATE, GIT_COMMITTER_DATE=DATE)
    return run(
        [
            "git",
            "-c",
            f"user.name={AUTHOR[0]}",
            "-c",
            f"user.email={AUTHOR[1]}",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.autocrlf=false",
            "-c",
            "safe.directory=*",
            *args,
        ],
        cwd=out,
        env=env,
    )


def up_to_date(out: Path) -> bool:
    """Whether ``out`` is a corpus committed from these very sources, unchanged since."""
    marker = out / MARKER
    if not marker.is_file() or not (out / ".git").exists():
        return False
    if marker.read_text(encoding="utf-8") != marker_text():
        return False
    try:
        return not git(out, "status", "--porcelain", "--untracked-files=no").strip() and bool(
            git(out, "rev-parse", "--verify", "-q", "HEAD").strip()
        )
    except CorpusError:
        return False


def clear(out: Path) -> None:
    """Empty ``out`` for a new corpus; refuse a folder that holds something else."""
    if out.exists() and not out.is_dir():
        raise CorpusError(f"{out} exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise CorpusError(f"{out} is not empty and holds no {MARKER}: not a polyglot corpus, left alone")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)


def build(out: Path, cache: Path) -> Counter[str]:
    """Lay out and commit the corpus; the number of files in each folder."""
    clear(out)
    counts: Counter[str] = Counter({s.folder: lay_out(s, cache, out) for s in SOURCES})
    (out / MARKER).write_text(marker_text(), encoding="utf-8")
    git(out, "init", "-q", "-b", "main")
    git(out, "add", "-A")
    git(out, "commit", "-q", "-m", "polyglot corpus: " + ", ".join(f"{s.name} {s.version}" for s in SOURCES))
    return counts


def tracked_counts(out: Path) -> Counter[str]:
    paths = git(out, "ls-files").splitlines()
    return Counter(path.split("/", 1)[0] for path in paths if "/" in path)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the corpus's folder (a git repository)")
    parser.add_argument(
        "--cache", type=Path, help="downloads, kept between runs (default: OUT/../polyglot-cache)"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out: Path = args.out.resolve()
    cache: Path = (args.cache or out.parent / "polyglot-cache").resolve()
    try:
        if up_to_date(out):
            print(f"{out}: up to date", file=sys.stderr)
        else:
            build(out, cache)
        counts = tracked_counts(out)
        head = git(out, "rev-parse", "HEAD").strip()
    except CorpusError as exc:
        print(f"polyglot_corpus: {exc}", file=sys.stderr)
        return 1
    for folder, count in sorted(counts.items()):
        print(f"{folder}\t{count} files")
    print(f"{out}\t{sum(counts.values())} files\tcommit {head}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
