"""What git's history says of files: last commit dates (for attribution lines) and which
files change together (for the file graph)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from kbc.analyzers.gitrepo import git_lines


def last_commit_dates(root: Path, paths: Iterable[str]) -> dict[str, str]:
    """YYYY-MM-DD of the last commit touching each path; missing when unknown.

    One ``git log`` walk, newest first, stopped as soon as every path is dated.
    """
    wanted = set(paths)
    if not wanted:
        return {}
    dates: dict[str, str] = {}
    current = ""
    for line in git_lines(root, "log", "--format=%x00%cs", "--name-only", "--relative", "--no-renames",
                          "--", "."):
        line = line.rstrip("\n")
        if line.startswith("\0"):
            current = line[1:]
        elif line and line in wanted and line not in dates:
            dates[line] = current
            if len(dates) == len(wanted):
                break  # stopping the walk stops git
    return dates


COCHANGE_COMMITS = 2000  # the latest commits read for files changed together
COCHANGE_MAX_FILES = 10  # a commit changing more files than this says little about any pair


def changed_together(root: Path, commits: int = COCHANGE_COMMITS,
                     max_files: int = COCHANGE_MAX_FILES) -> dict[tuple[str, str], float]:
    """Pairs of files (sorted) changed by the same commits among the latest ``commits``
    non-merge commits reachable from HEAD, each commit adding 1 / (files - 1) to each of its
    pairs, so a commit weighs as much in all as one import between two files; empty when
    ``root`` is not a git work tree. Only the history up to HEAD is read: a store built at an
    old commit never learns from what came after it."""
    pairs: dict[tuple[str, str], float] = {}
    current: list[str] = []

    def close() -> None:
        if 1 < len(current) <= max_files:
            share = 1.0 / (len(current) - 1)
            ordered = sorted(set(current))
            for i, a in enumerate(ordered):
                for b in ordered[i + 1:]:
                    pairs[(a, b)] = pairs.get((a, b), 0.0) + share
        current.clear()

    for line in git_lines(root, "log", "--no-merges", "--format=%x00", "--name-only", "--relative",
                          "--no-renames", f"-n{commits}", "HEAD", "--", "."):
        line = line.rstrip("\n")
        if line.startswith("\0"):
            close()
        elif line:
            current.append(line)
    close()
    return pairs
