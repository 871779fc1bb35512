"""Depth before breadth: a long definition packed whole once any piece of it is taken.

The index cuts a definition longer than a chunk into pieces at its statements, and a section
of a team note longer than a window into overlapping windows. Packed in rank order, a slice could
hold the piece the searches liked and stop there, with the line to change (or the sentence
that answers) in the next piece. Here the packing order puts the other pieces of a definition,
or the other windows of a section, right after the first of its pieces to be taken, when the
whole costs at most ``WHOLE_SHARE`` of the budget; a longer one keeps its rank order, and the
slice marks what it leaves out of a definition (:func:`kbc.retrieval.pack.pack`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from kbc.domain.models import Chunk
from kbc.retrieval.matched import Located

WHOLE_SHARE = 0.25  # of the budget a definition may take to be packed whole (0: rank order)
LOOKED_AT = 3.0  # how far down the ranking pieces are followed, in budgets' worth of tokens


def pieces_of(units: Sequence[Located]) -> dict[str, list[str]]:
    """Unit id -> the ids of every piece of its definition (in line order), for the units of one
    file that belong to a definition cut into pieces: a piece without names of its own that
    starts where a function's or method's piece ends continues it."""
    groups: list[list[Located]] = []
    for unit in units:
        previous = groups[-1][-1] if groups else None
        continues = (
            previous is not None
            and not unit.symbols
            and unit.unit in ("function", "method")
            and previous.unit == unit.unit
            and unit.start == previous.end + 1
        )
        if continues:
            groups[-1].append(unit)
        else:
            groups.append([unit])
    out: dict[str, list[str]] = {}
    for group in groups:
        if len(group) > 1:
            ids = [u.id for u in group]
            for unit in group:
                out[unit.id] = ids
    return out


def section_windows(windows: Sequence[Chunk]) -> dict[str, list[str]]:
    """Chunk id -> the ids of every window of its section (in line order), for the windows of
    one note that cut a section too long for one window: windows under the same
    headings that overlap or touch the one before."""
    groups: list[list[Chunk]] = []
    for window in sorted(windows, key=lambda c: (c.start_line, c.end_line, c.id)):
        previous = groups[-1][-1] if groups else None
        if (
            previous is not None
            and window.heading == previous.heading
            and window.start_line <= previous.end_line + 1
        ):
            groups[-1].append(window)
        else:
            groups.append([window])
    return {c.id: [w.id for w in group] for group in groups if len(group) > 1 for c in group}


def whole_definitions(
    ranked: Sequence[tuple[str, float]],
    chunks: Mapping[str, Chunk],
    by_path: Mapping[str, Sequence[Located]],
    load: Callable[[list[str]], dict[str, Chunk]],
    budget: int,
    share: float | None = None,
    windows_of: Callable[[str], list[str]] | None = None,
) -> tuple[list[tuple[str, float]], dict[str, Chunk]]:
    """``ranked`` in packing order, each piece of a long definition (each window of a long
    section of a team note, when ``windows_of`` gives the ids of a file's chunks) followed by its
    other pieces (nearest first, at its score) when the whole fits in ``share`` of ``budget``;
    also the chunks of the pieces it added."""
    share = WHOLE_SHARE if share is None else share
    if share <= 0:
        return list(ranked), {}
    seen: set[str] = set()
    added: dict[str, Chunk] = {}
    groups: dict[str, dict[str, list[str]]] = {}
    out: list[tuple[str, float]] = []
    spent = 0
    for cid, score in ranked:
        if cid in seen:
            continue
        seen.add(cid)
        out.append((cid, score))
        chunk = chunks.get(cid)
        if chunk is None or spent > LOOKED_AT * budget:
            continue
        spent += chunk.tokens
        section = chunk.kind == "knowledge" and chunk.unit == "window" and windows_of is not None
        if chunk.unit not in ("function", "method") and not section:
            continue
        if chunk.path not in groups and section and windows_of is not None:
            ids = windows_of(chunk.path)
            missing = [i for i in ids if i not in chunks and i not in added]
            added.update(load(missing) if missing else {})
            every = [c for c in (chunks.get(i) or added.get(i) for i in ids) if c is not None]
            groups[chunk.path] = section_windows([c for c in every if c.unit == "window"])
        elif chunk.path not in groups:
            groups[chunk.path] = pieces_of(by_path.get(chunk.path, ()))
        siblings = [s for s in groups[chunk.path].get(cid, []) if s != cid and s not in seen]
        if not siblings:
            continue
        missing = [s for s in siblings if s not in chunks and s not in added]
        added.update(load(missing) if missing else {})
        found = {s: chunks.get(s) or added.get(s) for s in siblings}
        if any(c is None for c in found.values()):
            continue
        whole = chunk.tokens + sum(c.tokens for c in found.values() if c is not None)
        if whole > share * budget:
            continue
        for sibling in sorted(siblings, key=lambda s: abs(found[s].start_line - chunk.start_line)):  # type: ignore[union-attr]
            seen.add(sibling)
            out.append((sibling, score))
    return out, added
