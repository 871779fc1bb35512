"""Embedding units: the pieces of chunks the embedding model sees whole.

A chunk (a definition, or a window of up to 60 lines) is the unit of ranking
and packing, but the shipped MiniLM reads only 256 tokens, about 15 lines of
code: embedded whole, a long chunk would be judged by its first quarter. So
each chunk is embedded as units of ``UNIT_LINES`` lines that tile the lines the
chunk starts (up to where the next chunk of the file begins, for overlapping
windows), each headed by the chunk's path and breadcrumb, and a chunk's vector
score is the best of its units'.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence

from kbc.domain.models import Chunk, EmbedUnit
from kbc.index.chunks import split_lines

UNIT_LINES = 16


def unit_id(model_id: str, chunk: str, offset: int, lines: int) -> str:
    """Named by the model, the chunk and the unit's place in it (lines from the chunk's first):
    a definition's chunk id does not change when other code moves, so neither do its units."""
    return hashlib.sha256(f"{model_id}\0{chunk}\0{offset}\0{lines}".encode()).hexdigest()[:24]


def units_of(chunks: Iterable[Chunk], model_id: str, unit_lines: int = UNIT_LINES) -> list[EmbedUnit]:
    """Units for every chunk; chunks of one file tile it without double work."""
    by_path: dict[str, list[Chunk]] = defaultdict(list)
    for chunk in chunks:
        by_path[chunk.path].append(chunk)
    units: list[EmbedUnit] = []
    for path in sorted(by_path):
        ordered = sorted(by_path[path], key=lambda c: (c.start_line, c.end_line))
        for index, chunk in enumerate(ordered):
            following = ordered[index + 1] if index + 1 < len(ordered) else None
            region_end = chunk.end_line
            if following is not None and following.start_line <= chunk.end_line:
                region_end = following.start_line - 1
            units.extend(_tile(chunk, region_end, model_id, unit_lines))
    return units


_DEFINITION = ("def ", "async def ", "class ")


def _tile(chunk: Chunk, region_end: int, model_id: str, unit_lines: int) -> list[EmbedUnit]:
    """Tiles of ``unit_lines`` lines, each headed by the path and the breadcrumb; tiles after
    the first also carry the definition's own line, and the first carries a class's outline."""
    lines = split_lines(chunk.text)
    header = chunk.path + (f" — {chunk.heading}" if chunk.heading else "") + "\n"
    lead = next((line for line in lines if line.lstrip().startswith(_DEFINITION)), "") \
        if chunk.unit in ("class", "function", "method") else ""
    out = []
    start = chunk.start_line
    while start <= region_end:
        end = min(start + unit_lines - 1, region_end)
        body = "".join(lines[start - chunk.start_line:end - chunk.start_line + 1])
        if body.strip():
            first = start == chunk.start_line
            text = header + (lead if lead and not first else "") + body
            if first and chunk.context:
                text += chunk.context + "\n"
            out.append(EmbedUnit(unit_id(model_id, chunk.id, start - chunk.start_line, end - start + 1),
                                 chunk.id, start, end, text))
        start = end + 1
    return out


def unit_metadata(unit: EmbedUnit, chunk: Chunk) -> dict[str, str | int | bool]:
    """What the vector store keeps beside a unit (no line numbers: a unit keeps its id when
    its definition moves, and the chunk table holds where it is now)."""
    return {
        "chunk_id": chunk.id, "path": chunk.path, "kind": chunk.kind, "module": chunk.module,
        "symbols": " ".join(chunk.symbols), "role": chunk.role, "unit": chunk.unit,
    }


def best_by_chunk(hits: Sequence[tuple[str, float]]) -> dict[str, float]:
    """(chunk id, similarity) pairs of unit hits reduced to each chunk's best."""
    best: dict[str, float] = {}
    for chunk, similarity in hits:
        if similarity > best.get(chunk, float("-inf")):
            best[chunk] = similarity
    return best
