"""What git's history says of files: last commit dates (for attribution lines), which files
change together (for the file graph) and what each recent commit was about and changed (the
precedents a task is matched against)."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
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
    for line in git_lines(
        root, "log", "--format=%x00%cs", "--name-only", "--relative", "--no-renames", "--", "."
    ):
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


def changed_together(
    root: Path, commits: int = COCHANGE_COMMITS, max_files: int = COCHANGE_MAX_FILES
) -> dict[tuple[str, str], float]:
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
                for b in ordered[i + 1 :]:
                    pairs[(a, b)] = pairs.get((a, b), 0.0) + share
        current.clear()

    for line in git_lines(
        root,
        "log",
        "--no-merges",
        "--format=%x00",
        "--name-only",
        "--relative",
        "--no-renames",
        f"-n{commits}",
        "HEAD",
        "--",
        ".",
    ):
        line = line.rstrip("\n")
        if line.startswith("\0"):
            close()
        elif line:
            current.append(line)
    close()
    return pairs


PRECEDENT_COMMITS = 2000  # the latest commits whose messages are kept as precedents
PRECEDENT_MAX_FILES = 50  # a commit changing more files than this is no precedent for any of them
MAX_WORD = 30  # a longer run of letters in a message is no word anyone searches for
_MESSAGE_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|\d+")
_COMMON = frozenset(
    "the and for with from this that into when not are was were has have had but its can use used "
    "using also only then than more most some any all add adds added fix fixes fixed".split()
)


def message_words(text: str) -> list[str]:
    """The words of a commit message or a task as precedents are matched: runs of letters
    (identifiers split at case changes) and of digits, lower-cased, three characters or more,
    common English and commit words left out."""
    out = []
    for match in _MESSAGE_WORD.finditer(text):
        word = match.group().lower()
        if 3 <= len(word) <= MAX_WORD and word not in _COMMON:
            out.append(word)
    return out


def commit_messages(
    root: Path, kept: Collection[str], commits: int = PRECEDENT_COMMITS, rev: str = "HEAD"
) -> list[tuple[list[str], list[str]]]:
    """(the distinct words of its message, the files of ``kept`` it changed) of each of the latest
    ``commits`` non-merge commits reachable from ``rev``, newest first; commits changing none of
    ``kept`` or more than :data:`PRECEDENT_MAX_FILES` files are left out, and so is all of it
    when ``root`` is not a git work tree. Only words are kept of a message, never its text,
    and only paths the store indexes: nothing of it names a file outside the repository."""
    out: list[tuple[list[str], list[str]]] = []
    words: list[str] = []
    paths: list[str] = []

    def close() -> None:
        changed = sorted({p for p in paths if p in kept})
        if words and changed and len(paths) <= PRECEDENT_MAX_FILES:
            out.append((words.copy(), changed))
        words.clear()
        paths.clear()

    in_message = False
    for line in git_lines(
        root,
        "log",
        "--no-merges",
        "--format=%x00%B%x01",
        "--name-only",
        "--relative",
        "--no-renames",
        f"-n{commits}",
        rev,
        "--",
        ".",
    ):
        line = line.rstrip("\n")
        if line.startswith("\0"):
            close()
            in_message = True
            line = line[1:]
        if in_message:
            text, end, _ = line.partition("\x01")
            words.extend(w for w in message_words(text) if w not in words)
            in_message = not end
        elif line:
            paths.append(line)
    close()
    return out
