"""Last commit dates of files, for attribution lines."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from pathlib import Path


def last_commit_dates(root: Path, paths: Iterable[str]) -> dict[str, str]:
    """YYYY-MM-DD of the last commit touching each path; missing when unknown.

    One ``git log`` walk, newest first, stopped as soon as every path is dated.
    """
    wanted = set(paths)
    if not wanted:
        return {}
    command = ["git", "-C", str(root), "log", "--format=%x00%cs", "--name-only", "--relative",
               "--no-renames", "--", "."]
    dates: dict[str, str] = {}
    try:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   text=True, encoding="utf-8", errors="replace")
    except OSError:
        return dates
    with process:
        assert process.stdout is not None
        current = ""
        for line in process.stdout:
            line = line.rstrip("\n")
            if line.startswith("\0"):
                current = line[1:]
            elif line and line in wanted and line not in dates:
                dates[line] = current
                if len(dates) == len(wanted):
                    break
        process.kill()
    return dates
