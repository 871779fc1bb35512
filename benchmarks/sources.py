"""The corpora the speed and memory measurements build (``cold_build``, ``first_slice``,
``memory``): this repository's own clone, flask and sphinx at fixed commits of their mirrors
(``MIRROR_ROOT``), and networkx's sdist and sympy's wheel from the package index, each
checked against the index's sha256 and unpacked once under ``WORK/src``; and a fresh copy of
one to build in, never the pristine tree."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.request
import zipfile
from pathlib import Path

from real_packages import INDEX, fetch, normalized

HERE = Path(__file__).resolve().parent
FLASK_INSTANCE = "pallets__flask-4992"
SPHINX_TAG = "v3.4.0"  # December 2020
CORPORA = ("kbc", "flask", "sphinx", "networkx", "sympy")


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def wheel(name: str, version: str, work: Path) -> Path:
    """A pure-Python wheel from the simple index (PEP 691), checked by sha256 and unpacked."""
    import hashlib

    target = work / "src" / f"{normalized(name)}-{version}-wheel"
    if target.exists():
        return target
    request = urllib.request.Request(
        INDEX.format(normalized(name)), headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        files = json.load(response)["files"]
    wanted = f"{name}-{version}-py3-none-any.whl"
    entry = next((f for f in files if f["filename"] == wanted), None)
    if entry is None:
        raise SystemExit(f"{wanted}: not in the index")
    with urllib.request.urlopen(entry["url"], timeout=300) as response:
        data = response.read()
    if hashlib.sha256(data).hexdigest() != entry["hashes"]["sha256"]:
        raise SystemExit(f"{wanted}: sha256 does not match the index")
    archive = work / "archives" / wanted
    archive.parent.mkdir(parents=True, exist_ok=True)
    archive.write_bytes(data)
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    with zipfile.ZipFile(archive) as zipped:
        zipped.extractall(partial)
    partial.rename(target)
    return target


def mirrored(name: str, ref: str, target: Path) -> Path:
    """``ref`` of the mirror ``MIRROR_ROOT/<name>/repo``, checked out once at ``target``."""
    mirror = Path(os.environ.get("MIRROR_ROOT", "")) / name / "repo"
    if not mirror.is_dir():
        raise SystemExit(f"set MIRROR_ROOT to the folder holding {name}/repo ({mirror} missing)")
    if not target.exists():
        git("clone", "-q", "--no-checkout", str(mirror), str(target))
        git("checkout", "-q", ref, cwd=target)
    return target


def source_of(corpus: str, work: Path) -> tuple[Path, str]:
    """The corpus's pristine tree (never built in) and how it was obtained."""
    if corpus == "kbc":
        head = git("rev-parse", "--short", "HEAD", cwd=HERE).strip()
        target = work / "src" / f"kbc-{head}"
        if not target.exists():
            git("clone", "-q", str(HERE.parent), str(target))
        return target, f"a clone of {head}"
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
        return fetch("networkx", "3.4.2", work), "networkx 3.4.2, the sdist"
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
