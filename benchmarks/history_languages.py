"""Issue fixes from the histories of TypeScript, Go, Rust and Java projects, per language and
repository, against whole-file BM25 in the same run, beside the share of their files that parse.

    MIRROR_ROOT=DIR python benchmarks/history_languages.py --work W [--work W ...] [--sets DIR ...]

The questions are the sets ``benchmarks/questions/history-<language>`` (mined by
``benchmarks/mine_history.py ... --issues``: commits whose message closes an issue, the message
the task, the lines the commit changed in the parent's source files the gold), asked by
``benchmarks/shapes.py run ... --work W``, which records kbc's ranking and slices and BM25's
beside them. Per repository and per language: questions, file Acc@1 / Acc@5 (every gold file
among the first k documents) and HunkAll at 4k and 13k (every changed line inside the slice)
for kbc and for BM25, and the lead of kbc's Acc@5 over BM25's (the target: 15 points).

The parse share is over the files the questions are asked of: every distinct blob, in a
language kbc reads through tree-sitter, of the trees at the questions' parent commits (read
from the bare mirror ``MIRROR_ROOT/owner+name/repo``; ``node_modules`` left out), parsed as kbc
reads it (:func:`kbc.analyzers.code.grammars.parse`); a file counts when its tree has no
error node.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

Row = dict[str, Any]
FIGURES = ("acc@1", "acc@5", "hunk@4000", "hunk@13000")
LANGUAGE_NAMES = {"typescript": "TypeScript", "go": "Go", "rust": "Rust", "java": "Java"}
TARGET_LEAD = 15.0  # points of Acc@5 over BM25's


def language_of_set(name: str) -> str:
    tail = name.removeprefix("history-")
    return LANGUAGE_NAMES.get(tail, tail)


def parsed_blobs(mirror: Path, commits: list[str]) -> tuple[int, int, list[str]]:
    """(files, clean, paths that fail) over the distinct blobs of the trees at ``commits`` in a
    language read through tree-sitter."""
    from kbc.analyzers.code.grammars import parse
    from kbc.analyzers.code.languages import CODE_LANGUAGES
    from kbc.analyzers.discover import LANGUAGE_HEAD, language_of

    blobs: dict[str, str] = {}  # blob -> a path it has
    for commit in commits:
        listing = subprocess.run(
            ["git", "--git-dir", str(mirror), "ls-tree", "-r", "-z", commit],
            capture_output=True,
            check=True,
        ).stdout.decode("utf-8", errors="replace")
        for record in listing.split("\0"):
            if not record:
                continue
            meta, path = record.split("\t", 1)
            _mode, kind, blob = meta.split(" ")
            if kind == "blob" and "node_modules" not in path.split("/"):
                blobs.setdefault(blob, path)
    ordered = sorted(blobs)
    reader = subprocess.Popen(
        ["git", "--git-dir", str(mirror), "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert reader.stdin is not None and reader.stdout is not None
    files = clean = 0
    failing = []
    try:
        for blob in ordered:
            reader.stdin.write(blob.encode() + b"\n")
            reader.stdin.flush()
            header = reader.stdout.readline().split()
            if header[-1] == b"missing":  # a large file the mirror does not hold
                continue
            data = reader.stdout.read(int(header[2]))
            reader.stdout.read(1)  # the newline after the content
            path = blobs[blob]
            language = language_of(path, data[:LANGUAGE_HEAD])
            if language not in CODE_LANGUAGES:
                continue
            files += 1
            if parse(language, data).root_node.has_error:
                failing.append(path)
            else:
                clean += 1
    finally:
        reader.stdin.close()
        reader.wait()
    return files, clean, sorted(set(failing))


def _pct(values: list[float]) -> str:
    return f"{100 * sum(values) / len(values):.1f}%" if values else "–"


def _lead(kbc: list[float], bm25: list[float]) -> float:
    return 100 * (sum(kbc) - sum(bm25)) / len(kbc) if kbc else 0.0


def figures_table(results: list[Row], parsed: dict[str, tuple[int, int]]) -> str:
    from shape_metrics import metrics

    groups: dict[tuple[str, str], list[dict[str, dict[str, float]]]] = defaultdict(list)
    for result in results:
        scored = metrics(result)
        language = language_of_set(result["set"])
        groups[(language, result["repo"])].append(scored)
        groups[(language, "")].append(scored)
    heads = ["kbc Acc@1", "BM25 Acc@1", "kbc Acc@5", "BM25 Acc@5", "Acc@5 lead"]
    heads += ["kbc HunkAll 4k", "BM25 HunkAll 4k", "kbc HunkAll 13k", "BM25 HunkAll 13k", "files parse"]
    lines = [
        "| language | repository | questions | " + " | ".join(heads) + " |",
        "| --- | --- | ---: |" + " ---: |" * len(heads),
    ]
    order = sorted(
        groups, key=lambda key: (list(LANGUAGE_NAMES.values()).index(key[0]), key[1] == "", key[1])
    )
    for language, repo in order:
        got = groups[(language, repo)]
        column = {
            (system, figure): [g[system][figure] for g in got]
            for system in ("kbc", "bm25")
            for figure in FIGURES
        }
        repos = [r for lang, r in groups if lang == language and r] if not repo else [repo]
        files = sum(parsed.get(r, (0, 0))[0] for r in repos)
        clean = sum(parsed.get(r, (0, 0))[1] for r in repos)
        lead = _lead(column[("kbc", "acc@5")], column[("bm25", "acc@5")])
        cells = [
            _pct(column[("kbc", "acc@1")]),
            _pct(column[("bm25", "acc@1")]),
            _pct(column[("kbc", "acc@5")]),
            _pct(column[("bm25", "acc@5")]),
            f"{lead:+.1f}" + ("" if repo else (" (met)" if lead >= TARGET_LEAD else " (not met)")),
            _pct(column[("kbc", "hunk@4000")]),
            _pct(column[("bm25", "hunk@4000")]),
            _pct(column[("kbc", "hunk@13000")]),
            _pct(column[("bm25", "hunk@13000")]),
            f"{clean} of {files} ({100 * clean / files:.1f}%)" if files else "–",
        ]
        name = f"**{language}, all**" if not repo else repo
        lines.append(f"| {language} | {name} | {len(got)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--work", type=Path, action="append", required=True)
    parser.add_argument("--no-parse", action="store_true", help="leave the parse share out")
    args = parser.parse_args()
    from shape_metrics import read_results
    from shape_sets import load_set

    mirror_root = Path(os.environ.get("MIRROR_ROOT", "/work/.mirror"))
    results = [r for work in args.work for r in read_results(work) if r["set"].startswith("history-")]
    parsed: dict[str, tuple[int, int]] = {}
    if not args.no_parse:
        folders = sorted((Path(__file__).parent / "questions").glob("history-*"))
        bases = {row["instance_id"]: row["base_commit"] for folder in folders for row in load_set(folder)}
        commits: dict[str, set[str]] = defaultdict(set)
        for result in results:
            commits[result["repo"]].add(bases[result["instance_id"]])
        for repo, shas in sorted(commits.items()):
            files, clean, failing = parsed_blobs(mirror_root / repo.replace("/", "+") / "repo", sorted(shas))
            parsed[repo] = (files, clean)
            print(f"{repo}: {clean} of {files} files parse; failing: {', '.join(failing) or 'none'}")
        print()
    print(figures_table(results, parsed))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    main()
