"""Boilerplate headers: the licence or banner comment block that a repository's files share.

A 300-token licence heading every file of a slice is 300 tokens the task never needed, and
the first passage an extractive answer would quote. The header of a file is the comment block
its first lines hold (``#``, ``//``, ``/* ... */`` lines, blank lines between them); it is
boilerplate when the same block, read without its comment marks, spaces and digits (years
change), heads at least ``SHARED_FILES`` files of the repository. A slice leaves such a block
out of the passages that start with it, unless the task is about it (most of the task's
words are in it).
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from kbc.domain.models import Chunk
from kbc.index.chunks import split_lines
from kbc.index.tokens import tokens

LEAVE_OUT = True  # False: headers stay in the passages they open (for comparison)
SHARED_FILES = 3  # files a header must head to be boilerplate
MIN_LINES = 3  # a shorter leading comment is a file's own note, not a banner
ABOUT_IT = 0.5  # share of the task's words a header must hold for the task to be about it
_COMMENT = re.compile(r"^\s*(#(?!!)|//|/\*|\*|\*/|;;|--)")
_MARKS = re.compile(r"^\s*(?:#+|//+|/\*+|\*+/?|;;+|--+)|\*/\s*$")
_NORMAL = re.compile(r"[\s\d]+")


def header_lines(lines: Sequence[str]) -> int:
    """How many of the first lines form the leading comment block (a shebang and an encoding
    line before it count with it; blank lines inside it too, not after it)."""
    last_comment = 0
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if (number == 1 and stripped.startswith("#!")) or (stripped and _COMMENT.match(line)):
            last_comment = number
        elif stripped:
            break
    return last_comment


def _key(lines: Iterable[str]) -> str:
    text = " ".join(_MARKS.sub("", line) for line in lines if not line.startswith("#!"))
    return hashlib.sha256(_NORMAL.sub(" ", text).strip().lower().encode()).hexdigest()


class Boilerplate:
    """The headers shared by files of one index (read once, from the chunks that open a file)."""

    def __init__(self, openings: Iterable[Chunk]) -> None:
        counted: Counter[str] = Counter()
        self._headers: dict[str, tuple[int, str]] = {}  # path -> (its header's lines, key)
        for chunk in openings:
            if chunk.start_line != 1 or chunk.kind != "code":
                continue
            lines = split_lines(chunk.text)
            size = header_lines(lines)
            if size < MIN_LINES:
                continue
            comments = [line for line in lines[:size] if line.strip()]
            if len(comments) < MIN_LINES:
                continue
            key = _key(comments)
            counted[key] += 1
            self._headers[chunk.path] = (size, key)
        self._shared = {key for key, n in counted.items() if n >= SHARED_FILES}

    def lines_of(self, path: str) -> int:
        """How many first lines of ``path`` are a shared header (0: none)."""
        found = self._headers.get(path)
        return found[0] if found is not None and found[1] in self._shared else 0

    def trimmed(self, chunk: Chunk, count: Callable[[str], int], asked: frozenset[str]) -> Chunk | None:
        """``chunk`` without the shared header it opens with (None when nothing else is left);
        the chunk itself when it holds none, or when the task is about it (``asked``: the
        task's search words)."""
        size = self.lines_of(chunk.path) if chunk.start_line == 1 and LEAVE_OUT else 0
        if not size:
            return chunk
        lines = split_lines(chunk.text)
        head = set(tokens("".join(lines[:size])))
        if asked and len(asked & head) >= ABOUT_IT * len(asked):
            return chunk
        rest = lines[size:]
        skipped = 0
        while skipped < len(rest) and not rest[skipped].strip():
            skipped += 1
        rest = rest[skipped:]
        if not rest:
            return None
        text = "".join(rest)
        return dataclasses.replace(
            chunk, start_line=chunk.start_line + size + skipped, text=text, tokens=count(text)
        )
