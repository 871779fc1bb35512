"""Test helpers: small repositories written from inline text, one-file analysis."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kbc.analyzers.python.analyze import analyze_source
from kbc.domain.models import AnalysisOk, AnalysisTask, FileFacts
from kbc.index.lexical import LexicalIndex
from kbc.store.facts_store import FactsStore
from kbc.store.views_store import ViewsStore

# `kbc -c`: the index without embeddings, where a test is about something else than vectors
LEXICAL = ("-c", "index.embed_model=none")

GIT_ENV = {
    "GIT_AUTHOR_NAME": "kbc tests",
    "GIT_AUTHOR_EMAIL": "tests@kbc.invalid",
    "GIT_COMMITTER_NAME": "kbc tests",
    "GIT_COMMITTER_EMAIL": "tests@kbc.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


def git(root: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, env=env, capture_output=True, text=True
    ).stdout


def write_tree(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8")


RepoFactory = Callable[..., Path]


def repo_factory(tmp_path: Path) -> RepoFactory:
    """make_repo({"pkg/__init__.py": "", ...}, git=True) -> the repository's root."""
    counter = [0]

    def make(files: dict[str, str | bytes], *, use_git: bool = True) -> Path:
        counter[0] += 1
        root = tmp_path / f"repo{counter[0]}"
        root.mkdir()
        write_tree(root, files)
        if use_git:
            git(root, "init", "-q", "-b", "main")
            git(root, "add", "-A")
            git(root, "commit", "-q", "-m", "initial")
        return root

    return make


def facts_of(
    source: str, module: str = "pkg.mod", path: str = "pkg/mod.py", is_package: bool = False
) -> FileFacts:
    """Analyze one file's source text and return its facts (the test fails otherwise)."""
    data = textwrap.dedent(source).lstrip("\n").encode()
    result = analyze_source(data, AnalysisTask(path, "/nonexistent/" + path, module, is_package))
    assert isinstance(result, AnalysisOk), result
    return result.facts


def targets(facts: FileFacts) -> dict[str, str]:
    """Call text -> resolved target, for the calls of one file."""
    return {c.text: c.target for c in facts.calls}


def analyze_repo(root: Path, store: Path | None = None, **settings: object) -> FactsStore:
    """Run the facts build on ``root`` (in-process) and return its store."""
    from kbc.domain.settings import Settings
    from kbc.services.analyze import analyze_repository

    summary = analyze_repository(root, Settings(workers=1, **settings), store)  # type: ignore[arg-type]
    return FactsStore(Path(summary.store))


def until(check: Callable[[], Any], seconds: float = 120) -> Any:
    """``check()``'s first truthy answer, asked every 0.2 s for up to ``seconds``."""
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError("timed out")


def sign(body: bytes, secret: str) -> str:
    """A GitHub push webhook's ``X-Hub-Signature-256`` of ``body``."""
    import hashlib
    import hmac

    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def store_snapshot(store_root: Path) -> dict[str, Any]:
    """What must equal between a refreshed store and a cold build of the same commit: the
    facts, the inventory, the chunks, the views and the precedents."""
    store = FactsStore(store_root)
    generation = store.generation()
    files = {
        name: (generation / name).read_text(encoding="utf-8")
        for name in ("facts.jsonl", "graph.json", "entry_points.json", "problems.json")
    }
    inventory = json.loads((generation / "inventory.json").read_text(encoding="utf-8"))
    lexical = LexicalIndex(store_root / "index" / "lexical.sqlite")
    try:
        chunks = sorted(lexical.chunk_ids())
        precedents = lexical.precedents()
    finally:
        lexical.close()
    views = {v.id: v.facts for v in ViewsStore(store_root).read()}
    return {
        "files": files,
        "inventory": inventory,
        "chunks": chunks,
        "views": views,
        "precedents": precedents,
    }
