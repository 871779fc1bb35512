"""Knowledge drift on a real git repository: documents fall behind as the code moves on."""

import json
import os
import subprocess
from pathlib import Path

from helpers import GIT_ENV, RepoFactory, analyze_repo, git, write_tree

from kbc.domain.codec import dumps
from kbc.domain.drift import DriftReason, DriftReport
from kbc.services.drift import find_drift, render_drift

CORE_DOC = """
    ---
    title: Core
    refs:
      - pkg/core.py
      - pkg/sub/**
    ---
    # Core

    `pkg.core.compute()` adds one; `Engine.run()` drives it and `pkg.core.Engine.speed` says how fast.

    ```python
    from pkg.core import compute  # `pkg.core.not_checked` inside a fence
    ```
"""
UTIL_DOC = """
    ---
    refs: [pkg/util.py]
    ---
    `pkg.util.tidy()` cleans up.
"""
PLAIN_DOC = """
    # Notes

    See `compute()` and `pkg.core.LIMIT`, `len()`, `os.path.join()`, `kbc.toml`.
"""
STALE_DOC = """
    ---
    refs:
      - pkg/core.py
      - pkg/old/**
    ---
    Nothing else.
"""
BAD_DOC = """
    ---
    refs: [pkg/core.py
    ---
    `pkg.core.Engine` is fine.
"""
CORE_V1 = """
    LIMIT = 3


    def compute(x):
        return x + 1


    class Engine:
        def __init__(self):
            self.speed = 2

        def run(self):
            return compute(1)
"""


def commit_at(root: Path, day: str, message: str) -> str:
    """Commit everything on 2026-01-``day`` (author and committer); returns the commit id."""
    stamp = f"2026-01-{day}T12:00:00Z"
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    for args in (["add", "-A"], ["commit", "-q", "-m", message]):
        subprocess.run(["git", "-C", str(root), *args], check=True, env=env, capture_output=True)
    return git(root, "rev-parse", "HEAD").strip()


def build_history(make_repo: RepoFactory) -> tuple[Path, dict[str, str]]:
    root = make_repo({}, use_git=False)
    git(root, "init", "-q", "-b", "main")
    commits: dict[str, str] = {}
    write_tree(
        root,
        {
            "pkg/__init__.py": "",
            "pkg/core.py": CORE_V1,
            "pkg/util.py": "def tidy():\n    pass\n",
            "docs/core.md": CORE_DOC,
            "docs/util.md": UTIL_DOC,
            "docs/plain.md": PLAIN_DOC,
            "docs/stale.md": STALE_DOC,
            "docs/bad.md": BAD_DOC,
            "README.md": "# Project\n",
        },
    )
    commits["docs"] = commit_at(root, "01", "code and its documents")
    write_tree(root, {"pkg/core.py": CORE_V1.replace("x + 1", "x + 2")})
    commits["tweak"] = commit_at(root, "02", "compute adds two")
    write_tree(root, {"pkg/core.py": CORE_V1.replace("compute", "calculate")})
    commits["rename"] = commit_at(root, "03", "compute is now calculate")
    write_tree(
        root, {"pkg/util.py": "def tidy():\n    return None\n", "docs/util.md": UTIL_DOC + "Returns None.\n"}
    )
    commits["util"] = commit_at(root, "04", "tidy and its document together")
    write_tree(root, {"README.md": "# Project\n\nMore.\n"})
    commits["readme"] = commit_at(root, "05", "unrelated")
    write_tree(root, {"pkg/sub/__init__.py": "", "pkg/sub/extra.py": "def more():\n    pass\n"})
    commits["sub"] = commit_at(root, "06", "a governed package appears")
    return root, commits


def test_documents_behind_the_code_are_reported_exactly(make_repo: RepoFactory, tmp_path: Path) -> None:
    root, commits = build_history(make_repo)
    store = analyze_repo(root, tmp_path / "store")

    reports = find_drift(root, store.root)

    first = commits["docs"]
    assert reports == [
        DriftReport(
            "docs/bad.md",
            (
                DriftReason(
                    "bad_front_matter",
                    "front-matter is not valid YAML: expected ',' or ']', but got '<stream end>' (line 3)",
                ),
            ),
            first,
            "2026-01-01",
        ),
        DriftReport(
            "docs/core.md",
            (
                DriftReason(
                    "code_changed",
                    "3 commits since the document's last commit (2026-01-01) changed 3 governed files; "
                    "the latest on 2026-01-06",
                    commits_since=3,
                    last_change="2026-01-06",
                    files=("pkg/core.py", "pkg/sub/__init__.py", "pkg/sub/extra.py"),
                ),
                DriftReason(
                    "missing_symbols", "mentions 1 name the code no longer has", names=("pkg.core.compute()",)
                ),
            ),
            first,
            "2026-01-01",
        ),
        DriftReport(
            "docs/plain.md",
            (DriftReason("missing_symbols", "mentions 1 name the code no longer has", names=("compute()",)),),
            first,
            "2026-01-01",
        ),
        DriftReport(
            "docs/stale.md",
            (
                DriftReason(
                    "code_changed",
                    "2 commits since the document's last commit (2026-01-01) changed 1 governed file; "
                    "the latest on 2026-01-03",
                    commits_since=2,
                    last_change="2026-01-03",
                    files=("pkg/core.py",),
                ),
                DriftReason("stale_ref", "1 ref matches no tracked file", refs=("pkg/old/**",)),
            ),
            first,
            "2026-01-01",
        ),
    ]
    # docs/util.md changed with its code and README.md governs nothing: neither is behind.
    data = json.loads(dumps(reports))
    assert data[1]["reasons"][0]["files"] == ["pkg/core.py", "pkg/sub/__init__.py", "pkg/sub/extra.py"]
    assert data[1]["last_commit"] == first and len(first) == 40


def test_updating_a_document_brings_it_up_to_date(make_repo: RepoFactory, tmp_path: Path) -> None:
    root, _ = build_history(make_repo)
    write_tree(root, {"docs/core.md": CORE_DOC.replace("pkg.core.compute()", "pkg.core.calculate()")})
    fixed = commit_at(root, "07", "core document caught up")
    store = analyze_repo(root, tmp_path / "store")

    paths = [r.path for r in find_drift(root, store.root)]
    assert paths == ["docs/bad.md", "docs/plain.md", "docs/stale.md"]

    # A later change to governed code puts it behind again, counted from the document's own commit.
    write_tree(root, {"pkg/sub/extra.py": "def more():\n    return 1\n"})
    commit_at(root, "09", "more returns one")
    (core,) = [r for r in find_drift(root, store.root) if r.path == "docs/core.md"]
    assert (core.last_commit, core.last_date) == (fixed, "2026-01-07")
    assert core.reasons == (
        DriftReason(
            "code_changed",
            "1 commit since the document's last commit (2026-01-07) changed 1 governed file; "
            "the latest on 2026-01-09",
            commits_since=1,
            last_change="2026-01-09",
            files=("pkg/sub/extra.py",),
        ),
    )


def test_render_drift_shows_each_reason(make_repo: RepoFactory, tmp_path: Path) -> None:
    root, commits = build_history(make_repo)
    store = analyze_repo(root, tmp_path / "store")

    text = render_drift(find_drift(root, store.root))

    short = commits["docs"][:12]
    assert text == (
        f"docs/bad.md  (last commit {short}, 2026-01-01)\n"
        "  bad front-matter: front-matter is not valid YAML: expected ',' or ']', "
        "but got '<stream end>' (line 3)\n"
        "\n"
        f"docs/core.md  (last commit {short}, 2026-01-01)\n"
        "  code changed: 3 commits since, latest 2026-01-06\n"
        "    pkg/core.py\n"
        "    pkg/sub/__init__.py\n"
        "    pkg/sub/extra.py\n"
        "  missing symbols: `pkg.core.compute()`\n"
        "\n"
        f"docs/plain.md  (last commit {short}, 2026-01-01)\n"
        "  missing symbols: `compute()`\n"
        "\n"
        f"docs/stale.md  (last commit {short}, 2026-01-01)\n"
        "  code changed: 2 commits since, latest 2026-01-03\n"
        "    pkg/core.py\n"
        "  stale refs (match no tracked file): pkg/old/**\n"
        "\n"
        "4 documents behind the code.\n"
    )
    assert render_drift([]) == "No document is behind the code.\n"


def test_a_plain_directory_is_checked_without_history(make_repo: RepoFactory, tmp_path: Path) -> None:
    root = make_repo(
        {"pkg/__init__.py": "", "pkg/core.py": CORE_V1, "docs/core.md": CORE_DOC, "docs/stale.md": STALE_DOC},
        use_git=False,
    )
    (root / "pkg" / "core.py").write_text("def other():\n    pass\n")
    store = analyze_repo(root, tmp_path / "store")

    reports = find_drift(root, store.root)

    assert reports == [
        DriftReport(
            "docs/core.md",
            (
                DriftReason(
                    "missing_symbols",
                    "mentions 3 names the code no longer has",
                    names=("Engine.run()", "pkg.core.Engine.speed", "pkg.core.compute()"),
                ),
                DriftReason("stale_ref", "1 ref matches no tracked file", refs=("pkg/sub/**",)),
            ),
        ),
        DriftReport(
            "docs/stale.md",
            (DriftReason("stale_ref", "1 ref matches no tracked file", refs=("pkg/old/**",)),),
        ),
    ]
