"""Tokens for lexical search over code and prose.

An identifier is kept whole and also split into its words: ``parse_module``
gives ``parse_module parse module``; ``HTTPServerError`` gives
``httpservererror http server error``. Everything is lower-cased; very common
words and single letters are dropped.

Words in any script are kept, folded the same way in the index and in a query:
case-folded, without diacritics, and with Turkish's dotted and dotless i both
read as ``i`` (``Ödeme kuralları`` gives ``odeme kurallari``, ``İade`` gives
``iade``), so a question typed without the letters of its language still finds
the note written with them.
"""

from __future__ import annotations

import functools
import re
import unicodedata

# What the index was tokenized with: part of the index's layout (another value re-chunks).
TOKENS_VERSION = 2
WORDS_KEPT = 32_768  # distinct words whose tokens are kept, read once ...
WORD_KEPT = 64  # ... each of at most this many characters
_WORD = re.compile(r"[^\W\d][\w]*|[0-9]+")
# Turkish's capital dotted I and dotless i, read as the i every other language has (casefold
# alone makes "İ" an i with a combining dot, and keeps "ı").
_DOTTED = str.maketrans({"İ": "i", "ı": "i"})
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

STOPWORDS = frozenset(
    """
a an the and or not of to in on at by for from with as is are was were be been being it its
this that these those if else elif then than so but do does did done can could should would
will shall may might must have has had i we you he she they them our your their my me us
there here what which who whom when where why how all any some no nor only own same too very
s t just into out up down over under again further once also about above below between both
each few more most other such def class return self cls import none true false pass lambda
""".split()
)


def fold(word: str) -> str:
    """``word`` lower-cased for matching: case-folded, diacritics dropped, Turkish i's as i."""
    if word.isascii():
        return word.lower()
    folded = unicodedata.normalize("NFKD", word.translate(_DOTTED).casefold())
    return "".join(c for c in folded if not unicodedata.combining(c))


def words(identifier: str) -> list[str]:
    parts: list[str] = []
    for piece in identifier.split("_"):
        parts.extend(_CAMEL.findall(piece))
    return [p.lower() for p in parts if p]


def tokens(text: str) -> list[str]:
    """Search tokens of ``text``, in order, with repeats (term frequency counts)."""
    out: list[str] = []
    for match in _WORD.findall(text):
        out.extend(_kept(match) if len(match) <= WORD_KEPT else _tokens_of(match))
    return out


def _tokens_of(match: str) -> tuple[str, ...]:
    """The search tokens of one word of a text."""
    whole = fold(match).strip("_")
    if not whole:
        return ()
    pieces = words(match) if match.isascii() else [fold(p) for p in match.split("_") if p]
    out = [whole] if len(whole) > 1 and whole not in STOPWORDS else []
    if len(pieces) > 1:
        out.extend(p for p in pieces if len(p) > 1 and p not in STOPWORDS)
    return tuple(out)


_kept = functools.lru_cache(maxsize=WORDS_KEPT)(_tokens_of)  # the same words recur through a repository


def path_tokens(path: str) -> list[str]:
    """The words of a path: ``kbc/index/chunks.py`` gives ``kbc index chunks py``."""
    return tokens(re.sub(r"[/.\-]", " ", path))
