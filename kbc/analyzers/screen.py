"""Which lines of a file hold any of a few patterns, found in one pass over the whole text.

The credential screens look at every line of every file, so they are searched over the file's
text at once (one search a matching line, none for the others) rather than line by line. Words
matched without regard to case are searched in the text lowercased, as Python's own
case-insensitive matching folds them (``K``, the Kelvin sign, is a ``k``; ``ſ`` an ``s``; ``İ``
and ``ı`` an ``i``): case-insensitive alternation costs several times a case-sensitive one.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass

# Characters Python's case-insensitive matching takes for an ASCII letter that ``str.lower``
# leaves as they are or turns into more than one character.
_FOLDS = str.maketrans({"ſ": "s", "ı": "i", "İ": "i", "K": "k"})


def lowered(text: str) -> str:
    """``text`` in lower case, character for character (the same length, so the same offsets),
    with every character Python's case-insensitive matching takes for an ASCII letter as that
    letter."""
    low = text.lower()
    if len(low) != len(text):  # a character lowered into two (İ): fold it alone
        low = "".join(ch.lower() if len(ch.lower()) == 1 else ch for ch in text)
    if low.isascii() or not any(ch in low for ch in "ſıİ"):
        return low
    return low.translate(_FOLDS)


def line_starts(lines: list[str]) -> list[int]:
    """The offset of each line in the lines joined by newlines."""
    return list(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))


def lines_matching(pattern: re.Pattern[str], text: str, starts: list[int]) -> list[int]:
    """Indexes of the lines of ``text`` (starting at ``starts``) that ``pattern`` finds a match
    in, in order: one search a matching line, none for the others. ``pattern`` must never match
    a newline, so that each match lies within one line, and look around for characters only."""
    out: list[int] = []
    match = pattern.search(text)
    while match is not None:
        index = bisect.bisect_right(starts, match.start()) - 1
        out.append(index)
        if index + 1 >= len(starts):
            break
        match = pattern.search(text, starts[index + 1])
    return out


@dataclass(frozen=True, slots=True)
class Screen:
    """Lines holding a match of any of ``patterns`` (case as written) or any of ``words`` (any
    case). No pattern may match a newline."""

    patterns: tuple[re.Pattern[str], ...]
    words: re.Pattern[str] | None = None  # lower-case words, searched in the text lowercased

    @classmethod
    def of(cls, patterns: Iterable[str], words: Iterable[str] = ()) -> Screen:
        listed = sorted(set(words))
        if any(word != word.lower() or not word.isascii() for word in listed):
            raise ValueError("a screen's words are written in lower-case ASCII")
        return cls(tuple(re.compile(p) for p in patterns),
                   re.compile("|".join(map(re.escape, listed))) if listed else None)

    def plus(self, *patterns: str) -> Screen:
        return Screen((*self.patterns, *(re.compile(p) for p in patterns)), self.words)

    def search(self, text: str) -> bool:
        """Whether ``text`` holds a match anywhere."""
        return (any(pattern.search(text) for pattern in self.patterns)
                or self.words is not None and self.words.search(lowered(text)) is not None)

    def lines(self, lines: list[str]) -> list[int]:
        """Indexes of the ``lines`` holding a match, in order."""
        text = "\n".join(lines)
        starts = line_starts(lines)
        found: set[int] = set()
        for pattern in self.patterns:
            found.update(lines_matching(pattern, text, starts))
        if self.words is not None:
            found.update(lines_matching(self.words, lowered(text), starts))
        return sorted(found)
