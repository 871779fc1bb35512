"""Tokens for lexical search over code and prose.

An identifier is kept whole and also split into its words: ``parse_module``
gives ``parse_module parse module``; ``HTTPServerError`` gives
``httpservererror http server error``. Everything is lower-cased; very common
words and single letters are dropped.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

STOPWORDS = frozenset("""
a an the and or not of to in on at by for from with as is are was were be been being it its
this that these those if else elif then than so but do does did done can could should would
will shall may might must have has had i we you he she they them our your their my me us
there here what which who whom when where why how all any some no nor only own same too very
s t just into out up down over under again further once also about above below between both
each few more most other such def class return self cls import none true false pass lambda
""".split())


def words(identifier: str) -> list[str]:
    parts: list[str] = []
    for piece in identifier.split("_"):
        parts.extend(_CAMEL.findall(piece))
    return [p.lower() for p in parts if p]


def tokens(text: str) -> list[str]:
    """Search tokens of ``text``, in order, with repeats (term frequency counts)."""
    out: list[str] = []
    for match in _WORD.findall(text):
        whole = match.lower().strip("_")
        if not whole:
            continue
        pieces = words(match)
        if len(whole) > 1 and whole not in STOPWORDS:
            out.append(whole)
        if len(pieces) > 1:
            out.extend(p for p in pieces if len(p) > 1 and p not in STOPWORDS)
    return out


def path_tokens(path: str) -> list[str]:
    """The words of a path: ``kbc/index/chunks.py`` gives ``kbc index chunks py``."""
    return tokens(re.sub(r"[/.\-]", " ", path))
