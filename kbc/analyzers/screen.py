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
    low = (text.replace("İ", "i") if "İ" in text else text).lower()  # İ lowers into two
    if len(low) != len(text):  # another character lowered into more than one: fold it alone
        low = "".join(ch.lower() if len(ch.lower()) == 1 else ch for ch in text)
    if low.isascii() or not any(ch in low for ch in "ſıİ"):
        return low
    return low.translate(_FOLDS)


class Text:
    """A file's lines joined, searched by several screens: each pattern's lines found once."""

    __slots__ = ("_hits", "_lowered", "_one_a_line", "_starts", "joined", "lines")

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.joined = "\n".join(lines)
        self._lowered: str | None = None
        self._starts: list[int] | None = None
        self._hits: dict[tuple[re.Pattern[str], bool], list[int]] = {}
        # no line holds a newline of its own (a reading's lines may)
        self._one_a_line = self.joined.count("\n") == max(0, len(lines) - 1)

    def line_at(self, offset: int) -> int:
        """The index of the line holding ``offset`` of the joined text."""
        if self._starts is None:
            self._starts = list(itertools.accumulate((len(line) + 1 for line in self.lines[:-1]), initial=0))
        return bisect.bisect_right(self._starts, offset) - 1

    def matching(self, pattern: re.Pattern[str], *, caseless: bool = False) -> list[int]:
        """Indexes of the lines ``pattern`` finds a match in (in the text lowercased when
        ``caseless``), in order: one search a matching line, none for the others. ``pattern``
        must never match a newline, so that each match lies within one line, and look around
        for characters only."""
        found = self._hits.get((pattern, caseless))
        if found is None:
            text = self.joined
            if caseless:
                if self._lowered is None:
                    self._lowered = lowered(self.joined)
                text = self._lowered
            found = _matching(pattern, text) if self._one_a_line else self._matching_by_offset(pattern, text)
            self._hits[pattern, caseless] = found
        return found

    def _matching_by_offset(self, pattern: re.Pattern[str], text: str) -> list[int]:
        out: list[int] = []
        match = pattern.search(text)
        while match is not None:
            index = self.line_at(match.start())
            out.append(index)
            if index + 1 >= len(self.lines):
                break
            assert self._starts is not None
            match = pattern.search(text, self._starts[index + 1])
        return out


def _matching(pattern: re.Pattern[str], text: str) -> list[int]:
    """:meth:`Text.matching` where every newline ends a line: lines counted, not looked up."""
    out: list[int] = []
    index = 0  # the line of ``done``
    done = 0
    match = pattern.search(text)
    while match is not None:
        index += text.count("\n", done, match.start())
        out.append(index)
        done = text.find("\n", match.start())
        if done < 0:
            break
        index += 1
        done += 1
        match = pattern.search(text, done)
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
        return cls(
            tuple(re.compile(p) for p in patterns),
            re.compile("|".join(map(re.escape, listed))) if listed else None,
        )

    def plus(self, *patterns: str) -> Screen:
        return Screen((*self.patterns, *(re.compile(p) for p in patterns)), self.words)

    def search(self, text: str) -> bool:
        """Whether ``text`` holds a match anywhere."""
        return (
            any(pattern.search(text) for pattern in self.patterns)
            or self.words is not None
            and self.words.search(lowered(text)) is not None
        )

    def lines(self, lines: list[str] | Text) -> list[int]:
        """Indexes of the ``lines`` holding a match, in order."""
        text = lines if isinstance(lines, Text) else Text(lines)
        found: set[int] = set()
        for pattern in self.patterns:
            found.update(text.matching(pattern))
        if self.words is not None:
            found.update(text.matching(self.words, caseless=True))
        return sorted(found)
