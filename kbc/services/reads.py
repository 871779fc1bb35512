"""What the knowledge base's plain reads return: a search's hits, the knowledge scopes and a
file's lines, serialised for every way in by :mod:`kbc.services.payloads`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchHit:
    id: str
    path: str
    start_line: int
    end_line: int
    kind: str
    score: float
    heading: str
    symbols: tuple[str, ...]
    text: str
    repository: str = ""  # the repository it came from, in a search across several


@dataclass(frozen=True, slots=True, kw_only=True)
class ScopeSummary:
    scope: str
    documents: int
    roots: tuple[str, ...]
    default: bool  # read by a request that names no scope


@dataclass(frozen=True, slots=True, kw_only=True)
class FileLines:
    path: str
    start_line: int
    end_line: int
    lines: int  # in the whole file
    text: str
    truncated: bool | None = None  # with a budget: whether lines were left out (None: no budget)
