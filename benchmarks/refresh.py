"""`kbc refresh` against a cold build of the same commit, on a real history, in one run.

    MIRROR_ROOT=... python benchmarks/refresh.py [--repo pallets+flask] [--base COMMIT]
        [--work DIR] [--edits 3] [--update-results]

1. Cold build at BASE, then ``kbc refresh`` to the next commit after it (the two
   consecutive commits of the history); the same next commit is cold-built in a
   separate clone: the ratio is refresh time / cold build time.
2. One-file change: a line of one source file is edited in place (its facts do not
   move, so no view changes) and committed; ``kbc refresh`` runs ``--edits`` times
   (a different file each time); the median time against the cold build, and the
   chunks re-embedded against that file's own units.

Embeddings are on (the packaged model); no LLM.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from results_file import report
from timing import clock, timed

from kbc.domain.settings import Settings
from kbc.index.embed import model_name
from kbc.index.lexical import LexicalIndex
from kbc.index.units import units_of
from kbc.services.build import build_repository
from kbc.services.refresh import refresh

DEFAULT_BASE = "4c288bc97ea371817199908d0d9b12de9dae327e"  # pallets/flask, base of pallets__flask-4992


def git(root: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@kbc.invalid",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@kbc.invalid",
    }
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True, env=env
    ).stdout


def clone(mirror: Path, commit: str, target: Path) -> Path:
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(mirror), str(target)], check=True)
    git(target, "checkout", "-q", "-B", "bench", commit)
    return target


def next_commit(mirror: Path, base: str) -> str:
    """The first commit after ``base`` on a first-parent path towards the mirror's HEAD."""
    out = subprocess.run(
        [
            "git",
            "--git-dir",
            str(mirror),
            "rev-list",
            "--reverse",
            "--first-parent",
            "--ancestry-path",
            f"{base}..HEAD",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    if not out:
        sys.exit(f"no commit after {base} in {mirror}")
    return out[0]


def timed_build(root: Path, settings: Settings) -> float:
    return timed(lambda: build_repository(root, settings, no_llm=True, wait=True)).wall


def file_units(root: Path, path: str) -> int:
    lexical = LexicalIndex(root / ".kbc" / "index" / "lexical.sqlite")
    try:
        chunks = [c for c in lexical.all_chunks() if c.path == path]
    finally:
        lexical.close()
    return len(units_of(chunks, model_name(), tests=Settings().embed_tests))


def edit_in_place(root: Path, path: str) -> None:
    """Change one ``return`` line's text without moving any line."""
    lines = (root / path).read_text(encoding="utf-8").split("\n")
    for index, line in enumerate(lines):
        if line.strip().startswith("return ") and "#" not in line:
            lines[index] = line + "  # edited"
            break
    else:
        lines[-1] = lines[-1] + "# edited"
    (root / path).write_text("\n".join(lines), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", default="pallets+flask")
    parser.add_argument("--base", default=DEFAULT_BASE)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--edits", type=int, default=3)
    parser.add_argument("--update-results", action="store_true")
    args = parser.parse_args()
    mirror = Path(os.environ.get("MIRROR_ROOT", "/work/.mirror")) / args.repo / "repo"
    work = args.work or Path(tempfile.mkdtemp(prefix="kbc-refresh-"))
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    settings = Settings()
    second = next_commit(mirror, args.base)

    live = clone(mirror, args.base, work / "live" / "repo")
    cold_base = timed_build(live, settings)
    git(live, "checkout", "-q", "-B", "bench", second)
    with clock() as stepped:
        step = refresh(str(live), settings, no_llm=True)
    refresh_next = stepped.wall
    assert step.build is not None

    other = clone(mirror, second, work / "cold" / "repo")
    cold_next = timed_build(other, settings)

    candidates = sorted(
        p
        for p in git(live, "ls-files", "*.py").split()
        if p.startswith(("src/", "flask/", "requests/", "seaborn/", "pylint/", "_pytest/"))
        and not p.endswith("__init__.py")
    )
    one_file: list[tuple[float, int, int, int, int]] = []
    for number in range(args.edits):
        path = candidates[(number * 7) % len(candidates)]
        edit_in_place(live, path)
        git(live, "commit", "-q", "-am", f"edit {path}")
        with clock() as refreshed:
            done = refresh(str(live), settings, no_llm=True)
        seconds = refreshed.wall
        assert done.build is not None and done.mode == "incremental", done.reason
        one_file.append(
            (
                seconds,
                done.build.index.changed_files,
                done.build.index.embedded,
                file_units(live, path),
                done.build.index.embedded_views,
            )
        )
    median = statistics.median(s for s, *_ in one_file)
    lines = [
        f"{args.repo} at `{args.base[:10]}` → `{second[:10]}` "
        f"({len(step.changes.added)} added, {len(step.changes.modified)} modified, "
        f"{len(step.changes.deleted)} deleted, {len(step.changes.renamed)} renamed files), "
        f"embeddings on ({model_name()}), no LLM, one run.",
        "",
        "| run | time | vs cold build of the same commit | files re-chunked | units embedded |",
        "| --- | ---: | ---: | ---: | ---: |",
        f"| cold build at the base | {cold_base:.1f} s | — | — | — |",
        f"| cold build at the next commit | {cold_next:.1f} s | 1.00× | — | — |",
        f"| refresh base → next commit ({step.mode}) | {refresh_next:.2f} s | "
        f"{refresh_next / cold_next:.1%} | {step.build.index.changed_files} | {step.build.index.embedded} |",
    ]
    for seconds, rechunked, embedded, units, of_views in one_file:
        lines.append(
            f"| refresh after a one-file commit | {seconds:.2f} s | {seconds / cold_next:.1%} | "
            f"{rechunked} | {embedded}: {embedded - of_views} of the file's {units}, "
            f"{of_views} of views |"
        )
    lines += [
        "",
        f"One-file refresh, median of {len(one_file)}: {median:.2f} s, "
        f"{median / cold_next:.1%} of the cold build (target ≤ 2 %).",
    ]
    report(
        "\n".join(lines),
        args.update_results,
        "refresh",
        "Incremental refresh",
        f"MIRROR_ROOT=... python benchmarks/refresh.py --repo {args.repo} --base {args.base}",
    )


if __name__ == "__main__":
    main()
