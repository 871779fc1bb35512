"""The corpora the speed and memory measurements build (``cold_build``, ``first_slice``,
``memory``): this repository's own clone, flask and sphinx at fixed commits of their mirrors
(``MIRROR_ROOT``), and networkx's sdist and sympy's wheel from the package index, each
checked against the index's sha256 and unpacked once under ``WORK/src``; and a fresh copy of
one to build in, never the pristine tree."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from corpora import FetchError, mirrored, sdist, wheel

HERE = Path(__file__).resolve().parent
FLASK_INSTANCE = "pallets__flask-4992"
SPHINX_TAG = "v3.4.0"  # December 2020
CORPORA = ("kbc", "flask", "sphinx", "networkx", "sympy")


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def source_of(corpus: str, work: Path) -> tuple[Path, str]:
    """The corpus's pristine tree (never built in) and how it was obtained."""
    if corpus == "kbc":
        head = git("rev-parse", "--short", "HEAD", cwd=HERE).strip()
        target = work / "src" / f"kbc-{head}"
        if not target.exists():
            git("clone", "-q", str(HERE.parent), str(target))
        return target, f"a clone of {head}"
    try:
        return fetched(corpus, work)
    except FetchError as exc:
        raise SystemExit(str(exc)) from exc


def fetched(corpus: str, work: Path) -> tuple[Path, str]:
    """:func:`source_of` of a corpus that :mod:`corpora` fetches (its errors raised as they are)."""
    if corpus == "flask":
        instances = HERE.parent.parent / "shared" / "eval" / "swebench-dev" / "instances.jsonl"
        base = next(
            json.loads(line)["base_commit"]
            for line in instances.read_text().splitlines()
            if json.loads(line)["instance_id"] == FLASK_INSTANCE
        )
        tree = mirrored("pallets+flask", base, work / "src" / f"flask-{base[:10]}")
        return tree, f"base commit of `{FLASK_INSTANCE}`"
    if corpus == "sphinx":
        tree = mirrored("sphinx-doc+sphinx", SPHINX_TAG, work / "src" / f"sphinx-{SPHINX_TAG}")
        return tree, f"sphinx {SPHINX_TAG} (Python, minified JavaScript, message catalogs)"
    if corpus == "networkx":
        return sdist("networkx", "3.4.2", work), "networkx 3.4.2, the sdist"
    if corpus == "sympy":
        return wheel("sympy", "1.14.0", work), "sympy 1.14.0, the wheel's sources"
    raise SystemExit(f"unknown corpus {corpus!r}")


def fresh_copy(source: Path, work: Path, corpus: str) -> Path:
    tree = work / "build" / corpus
    shutil.rmtree(tree, ignore_errors=True)
    tree.parent.mkdir(parents=True, exist_ok=True)
    if (source / ".git").exists():
        git("clone", "-q", str(source), str(tree))
        git("checkout", "-q", git("rev-parse", "HEAD", cwd=source).strip(), cwd=tree)
    else:
        shutil.copytree(source, tree, symlinks=True)
    return tree
