"""Embedding units: the pieces of chunks the embedding model sees whole.

A chunk (a definition, or a window of up to 60 lines) is the unit of ranking
and packing, but the shipped MiniLM reads only 256 tokens, about 15 lines of
code. A chunk of parsed code is embedded once, by its head (headed by its path
and breadcrumb: the signature, docstring and first statements say what a
definition is for, and a long definition is already split into chunks of its
own). A window of other text is embedded as units of ``UNIT_LINES`` lines that
tile the lines it starts (up to where the next window of the file begins). A
chunk's vector score is the best of its units'.
"""

from __future__ import annotations

import hashlib
import posixpath
from collections import defaultdict
from collections.abc import Iterable, Sequence

from kbc.analyzers.roles import INCIDENTAL
from kbc.domain.models import Chunk, EmbedUnit
from kbc.index.chunks import split_lines

UNIT_LINES = 16
HEAD_LINES = 24  # lines of a definition's chunk its one unit holds (more than the model reads)
TILE_DEFINITIONS = False  # True: tile parsed code like other text

# Files whose vectors no question needs: data, keys and JSON by their format, and every file
# whose role (kbc.analyzers.roles) is third-party or incidental text (generated, minified, a
# message catalog, data, a lock). They stay in the lexical index (found by their words and by
# path), and embedding them would cost as much as the code asked about.
DATA_SUFFIXES = frozenset(
    {
        ".json",
        ".jsonl",
        ".ndjson",
        ".csv",
        ".tsv",
        ".xml",
        ".xsl",
        ".xslt",
        ".svg",
        ".lock",
        ".map",
        ".pem",
        ".crt",
        ".key",
        ".pub",
        ".sum",
        ".dat",
        ".bib",
    }
)
NO_VECTORS = INCIDENTAL | {"vendored"}


def unit_id(model_id: str, chunk: str, text: str) -> str:
    """Named by the model, the chunk and the text the model sees: a definition's chunk id does
    not change when other code moves, so neither do its units; a new way of heading them is
    new text, and so embedded again."""
    digest = hashlib.sha256(f"{model_id}\0{chunk}\0".encode())
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:24]


def units_of(
    chunks: Iterable[Chunk], model_id: str, unit_lines: int = UNIT_LINES, *, tests: bool = True
) -> list[EmbedUnit]:
    """Units for every chunk (``tests`` False: but those of test code); chunks of one file
    tile it without double work."""
    by_path: dict[str, list[Chunk]] = defaultdict(list)
    for chunk in chunks:
        if tests or chunk.role != "test":
            by_path[chunk.path].append(chunk)
    units: list[EmbedUnit] = []
    for path in sorted(by_path):
        ordered = sorted(by_path[path], key=lambda c: (c.start_line, c.end_line))
        if not wants_vectors(path, ordered):
            continue
        for index, chunk in enumerate(ordered):
            following = ordered[index + 1] if index + 1 < len(ordered) else None
            region_end = chunk.end_line
            if following is not None and following.start_line <= chunk.end_line:
                region_end = following.start_line - 1
            units.extend(_tile(chunk, region_end, model_id, unit_lines))
    # Two tiles of one chunk with the same text (a file that repeats itself) are one unit: the
    # same vector, and a vector store takes an id once.
    unique: dict[str, EmbedUnit] = {}
    for unit in units:
        unique.setdefault(unit.id, unit)
    return list(unique.values())


_DEFINITION = ("def ", "async def ", "class ")


def wants_vectors(path: str, chunks: Sequence[Chunk]) -> bool:
    """Whether a file's chunks (in line order) are embedded: not for data formats, nor for
    vendored code, generated or minified text, message catalogs, data or locks."""
    if posixpath.splitext(path.lower())[1] in DATA_SUFFIXES:
        return False
    return not (chunks and chunks[0].role in NO_VECTORS)


def _tile(chunk: Chunk, region_end: int, model_id: str, unit_lines: int) -> list[EmbedUnit]:
    """Tiles of ``unit_lines`` lines, each headed by the path and the breadcrumb; tiles after
    the first also carry the definition's own line, and the first carries a class's outline.
    Parsed code is one unit per chunk: its head (the signature, the docstring, the first
    statements; the model reads 256 tokens of it), since a long definition is already split
    into chunks of its own."""
    lines = split_lines(chunk.text)
    header = chunk.path + (f" — {chunk.heading}" if chunk.heading else "") + "\n"
    if chunk.unit != "window" and not TILE_DEFINITIONS:
        region_end = min(region_end, chunk.start_line + HEAD_LINES - 1)
        unit_lines = HEAD_LINES
    lead = (
        next((line for line in lines if line.lstrip().startswith(_DEFINITION)), "")
        if chunk.unit in ("class", "function", "method")
        else ""
    )
    out = []
    start = chunk.start_line
    while start <= region_end:
        end = min(start + unit_lines - 1, region_end)
        body = "".join(lines[start - chunk.start_line : end - chunk.start_line + 1])
        if body.strip():
            first = start == chunk.start_line
            text = header + (lead if lead and not first else "") + body
            if first and chunk.context:
                text += chunk.context + "\n"
            out.append(EmbedUnit(unit_id(model_id, chunk.id, text), chunk.id, start, end, text))
        start = end + 1
    return out


def unit_metadata(unit: EmbedUnit, chunk: Chunk) -> dict[str, str | int | bool]:
    """What the vector store keeps beside a unit (no line numbers: a unit keeps its id when
    its definition moves, and the chunk table holds where it is now)."""
    return {
        "chunk_id": chunk.id,
        "path": chunk.path,
        "kind": chunk.kind,
        "module": chunk.module,
        "symbols": " ".join(chunk.symbols),
        "role": chunk.role,
        "unit": chunk.unit,
    }


def best_by_chunk(hits: Sequence[tuple[str, float]]) -> dict[str, float]:
    """(chunk id, similarity) pairs of unit hits reduced to each chunk's best."""
    best: dict[str, float] = {}
    for chunk, similarity in hits:
        if similarity > best.get(chunk, float("-inf")):
            best[chunk] = similarity
    return best
