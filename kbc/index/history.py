"""Last commit dates of files, for attribution lines."""

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
