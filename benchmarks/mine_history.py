"""A question set from repositories' own history: each commit's message asked of the tree at
its parent, the lines it changed the answer (``shape`` ``issue``, for ``benchmarks/shapes.py``).

    MIRROR_ROOT=DIR python benchmarks/mine_history.py OUT owner/name [owner/name ...] [--commits 25]
        [--issues]

The commits are those ``kbc eval --history`` asks (:func:`kbc.eval.history.mine_commits`: the
newest that change source files that existed in the parent, at most a few files each);
``--issues`` keeps only those whose message closes an issue ("fixes #12"), so the task reads
like the fix of a report.
Used to fit the merge across corpora and the confidence on the kind of task issue reports are,
in repositories no evaluation uses (``train-history``), and, with ``--issues``, to measure
the languages on their real histories (``history-<language>``, held out).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path

from kbc.eval.history import mine_commits


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("repos", nargs="+")
    parser.add_argument("--commits", type=int, default=25)
    parser.add_argument("--issues", action="store_true", help="only commits that close an issue")
    parser.add_argument("--work", type=Path, default=Path("/tmp/kbc-mine-history"))
    args = parser.parse_args()
    mirror_root = Path(os.environ.get("MIRROR_ROOT", "/work/.mirror"))
    args.out.mkdir(parents=True, exist_ok=True)
    lines = []
    for repo in args.repos:
        owner, name = repo.split("/")
        clone = args.work / f"{owner}+{name}"
        if not clone.exists():
            subprocess.run(
                ["git", "clone", "-q", str(mirror_root / f"{owner}+{name}" / "repo"), str(clone)], check=True
            )
        mined = mine_commits(clone, args.commits, referencing=args.issues)
        for commit in mined.commits:
            hunks = {path: [list(r) for r in ranges] for path, ranges in commit.lines().items()}
            if not hunks:
                continue
            lines.append(
                json.dumps(
                    {
                        "instance_id": f"{owner}__{name}-{commit.sha[:10]}",
                        "shape": "issue",
                        "repo": repo,
                        "base_commit": commit.parent,
                        "problem_statement": commit.query,
                        "gold_files": sorted(hunks),
                        "hunks": hunks,
                        "source": f"commit {commit.sha}",
                    }
                )
            )
        print(f"{repo}: {len(mined.commits)} commits of {mined.scanned} scanned, skipped {mined.reasons}")
    (args.out / "instances.jsonl").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
