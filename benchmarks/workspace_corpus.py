"""The repositories of the workspace benchmark: each package's source distribution (the newest
in PyPI's simple index, fetched and checked by :mod:`corpora`) unpacked into a git repository and
built lexically, without an LLM; and the git and kbc commands that do it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from corpora import sdist_archive, unpack

PACKAGES = (
    "click",
    "flask",
    "requests",
    "httpx",
    "rich",
    "attrs",
    "jinja2",
    "werkzeug",
    "itsdangerous",
    "markupsafe",
)
MORE = (
    "idna",
    "certifi",
    "packaging",
    "pluggy",
    "iniconfig",
    "six",
    "toml",
    "colorama",
    "blinker",
    "tomli",
)  # --packages with these too: twenty repositories
KBC = [sys.executable, "-m", "kbc"]


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("KBC_")}


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args],
        capture_output=True,
        text=True,
        check=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "b",
            "GIT_AUTHOR_EMAIL": "b@example.org",
            "GIT_COMMITTER_NAME": "b",
            "GIT_COMMITTER_EMAIL": "b@example.org",
        },
    )
    return done.stdout


def source_of(package: str, downloads: Path, target: Path) -> None:
    """The package's source distribution (the one kept in ``downloads``, else the newest in the
    index, checked by its sha256) unpacked into ``target`` (a git repository)."""
    unpack(sdist_archive(package, None, downloads), target, top=True)
    git(target, "init", "-q", "-b", "main")
    git(target, "add", "-A")
    git(target, "commit", "-q", "-m", "source")


def prepare(work: Path, packages: list[str]) -> dict[str, Path]:
    downloads = work / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    repos = {}
    for package in packages:
        target = work / "repos" / package
        if not (target / ".git").is_dir():
            target.parent.mkdir(parents=True, exist_ok=True)
            source_of(package, downloads, target)
        if not (target / ".kbc" / "state.json").is_file():
            started = time.perf_counter()
            subprocess.run(
                [*KBC, "-c", "index.embed_model=none", "build", "--no-llm", str(target)],
                check=True,
                env=env(),
                stdout=subprocess.DEVNULL,
            )
            print(f"built {package} in {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
        repos[package] = target
    return repos
