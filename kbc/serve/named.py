"""What a slice's task named, as the slice builder shows it.

A slice's ``matched`` holds, for each mention read from the task (a path, a name, a frame, a
message), how it matched and what: qualified names of definitions, or files and lines
(``path``, ``path:line``, ``path:start-end``). Each becomes a link: a definition opens its
symbol page, a served file its lines in the source viewer; a file that is not served (one
holding a credential) is shown as text.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from kbc.serve.markdown import source_href

TARGETS_SHOWN = 8  # of one mention; the rest are counted
_LINES = re.compile(r"^(.+?):(\d+)(?:-(\d+))?$")


@dataclass(frozen=True, slots=True)
class Target:
    """One thing a mention matched: ``href`` opens it ("" when nothing may); ``location``: a
    file or its lines, else a definition."""

    text: str
    href: str
    location: bool


@dataclass(frozen=True, slots=True)
class Named:
    """A mention of the task, how it matched and what."""

    mention: str
    how: str  # its kind, and how it matched when that says more ("name, tail")
    targets: tuple[Target, ...]
    more: int = 0  # targets not shown


def named(matched: Iterable[Mapping[str, Any]], served: Collection[str]) -> list[Named]:
    """``matched`` (a slice's, as its JSON has it) for the page; ``served``: the files the
    source viewer may open."""
    found = []
    for entry in matched:
        kind, how = str(entry.get("kind", "")), str(entry.get("how", ""))
        targets = [str(t) for t in entry.get("targets", ())]
        found.append(
            Named(
                str(entry.get("mention", "")),
                kind if how in ("", kind) else f"{kind}, {how}",
                tuple(_target(t, served) for t in targets[:TARGETS_SHOWN]),
                max(0, len(targets) - TARGETS_SHOWN),
            )
        )
    return found


def _target(text: str, served: Collection[str]) -> Target:
    if text in served:
        return Target(text, source_href(text), True)
    lines = _LINES.match(text)
    if lines is not None and lines.group(1) in served:
        start = int(lines.group(2))
        return Target(text, source_href(lines.group(1), start, int(lines.group(3) or start)), True)
    if lines is not None or "/" in text:  # a file that is not served
        return Target(text, "", True)
    return Target(text, "/symbol?name=" + quote(text, safe=""), False)


__all__ = ["Named", "Target", "named"]
