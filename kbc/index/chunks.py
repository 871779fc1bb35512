"""Cut files into chunks: parsed code at its definitions, other text into line windows.

Parsed code is cut by :mod:`kbc.index.definitions`. Other text is cut into
windows of ``size`` lines with ``overlap`` lines shared between neighbours, so
every line is covered and no window exceeds ``size``; Markdown windows snap to
headings. A window's id hashes its path, window and content, so an unchanged
window keeps its id; a definition's id hashes its path, name and content.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from kbc.analyzers.roles import DOC_LANGUAGES, role_of
from kbc.domain.models import Chunk, ChunkKind
from kbc.index.definitions import Definition, definition_pieces

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def chunk_id(path: str, start: int, end: int, text: str) -> str:
    digest = hashlib.sha256(f"{path}\0{start}\0{end}\0".encode())
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:24]


def kind_of(language: str) -> ChunkKind:
    return "doc" if language in DOC_LANGUAGES else "code"


def windows(first: int, last: int, size: int, overlap: int) -> Iterator[tuple[int, int]]:
    """Line windows covering ``first``..``last`` (inclusive), ``overlap`` lines shared."""
    step = max(1, size - overlap)
    start = first
    while True:
        end = min(start + size - 1, last)
        yield start, end
        if end >= last:
            return
        start += step


@dataclass(frozen=True, slots=True)
class Section:
    start: int  # 1-based, inclusive
    end: int
    breadcrumb: str


def markdown_sections(lines: Sequence[str]) -> list[Section]:
    """Sections that start at each heading (outside code fences), with their breadcrumbs."""
    starts: list[tuple[int, str]] = []
    trail: list[tuple[int, str]] = []
    in_fence = False
    for number, line in enumerate(lines, start=1):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        match = None if in_fence else _HEADING.match(line)
        if match:
            level = len(match.group(1))
            trail = [(lvl, title) for lvl, title in trail if lvl < level]
            trail.append((level, match.group(2)))
            starts.append((number, " > ".join(title for _, title in trail)))
    if not starts or starts[0][0] != 1:
        starts.insert(0, (1, ""))
    sections = []
    for index, (start, crumb) in enumerate(starts):
        end = starts[index + 1][0] - 1 if index + 1 < len(starts) else len(lines)
        sections.append(Section(start, end, crumb))
    return sections


def _markdown_spans(lines: Sequence[str], size: int, overlap: int) -> Iterator[tuple[int, int, str]]:
    """Windows that never cross into a heading's section from the middle of another;
    short neighbouring sections share a window."""
    pending: list[Section] = []

    def flush() -> Iterator[tuple[int, int, str]]:
        if pending:
            yield pending[0].start, pending[-1].end, pending[0].breadcrumb
            pending.clear()

    for section in markdown_sections(lines):
        length = section.end - section.start + 1
        if length > size:
            yield from flush()
            for start, end in windows(section.start, section.end, size, overlap):
                yield start, end, section.breadcrumb
            continue
        if pending and section.end - pending[0].start + 1 > size:
            yield from flush()
        pending.append(section)
    yield from flush()


_BLANKS = str.maketrans({"\r": " ", "\f": " ", "\v": " "})
_CONTROLS = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")


def readable(text: str) -> str:
    """``text`` as kbc shows it: a CRLF line ending as LF, a lone carriage return, form feed or
    vertical tab as a space, and any other control character (a bell, a terminal escape) as
    U+FFFD; tabs and line breaks as they are, so every line keeps its number."""
    text = text.replace("\r\n", "\n").translate(_BLANKS)
    return _CONTROLS.sub("\ufffd", text)


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split on "\n" only (as git and the analyzer count them)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def chunk_text(
    path: str,
    text: str,
    language: str,
    *,
    size: int,
    overlap: int,
    module: str = "",
    definitions: Sequence[Definition] | None = None,
    role: str | None = None,
) -> list[Chunk]:
    """The chunks of one file. Parsed code (``definitions`` given, even empty) is cut at its
    definitions (:mod:`kbc.index.definitions`); anything else keeps line windows. ``role`` is
    the file's role as discovery read it (None: as its path tells)."""
    lines = split_lines(text)
    if not lines:
        return []
    role = role or role_of(path, language)
    if definitions is not None:
        return _definition_chunks(path, lines, language, size, module, definitions, role)
    if language == "markdown":
        spans = list(_markdown_spans(lines, size, overlap))
    else:
        spans = [(s, e, "") for s, e in windows(1, len(lines), size, overlap)]
    kind = kind_of(language)
    chunks = []
    for start, end, heading in spans:
        body = "".join(lines[start - 1 : end])
        chunks.append(
            Chunk(
                chunk_id(path, start, end, body),
                path,
                start,
                end,
                kind,
                language,
                body,
                heading,
                module,
                (),
                role,
            )
        )
    return chunks


def unit_chunk_id(path: str, key: str, text: str, heading: str = "", context: str = "") -> str:
    """A definition unit's id: its path, identity, breadcrumb and text, not its lines, so code
    moved by an edit elsewhere in the file keeps its id (and its vectors)."""
    digest = hashlib.sha256(f"{path}\0{key}\0{heading}\0{context}\0".encode())
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:24]


def _definition_chunks(
    path: str,
    lines: Sequence[str],
    language: str,
    size: int,
    module: str,
    definitions: Sequence[Definition],
    role: str,
) -> list[Chunk]:
    kind = kind_of(language)
    seen: dict[str, int] = {}
    chunks = []
    for piece in definition_pieces(lines, definitions, size, python=language in ("python", "python-stub")):
        body = "".join(lines[piece.start - 1 : piece.end])
        key = piece.key or piece.unit
        cid = unit_chunk_id(path, key, body, piece.heading, piece.context)
        seen[cid] = seen.get(cid, 0) + 1
        if seen[cid] > 1:  # the same text under the same name twice in one file
            cid = unit_chunk_id(path, f"{key}\0{seen[cid]}", body, piece.heading, piece.context)
        chunks.append(
            Chunk(
                cid,
                path,
                piece.start,
                piece.end,
                kind,
                language,
                body,
                piece.heading,
                module,
                piece.symbols,
                role,
                unit=piece.unit,
                context=piece.context,
            )
        )
    return chunks


# A knowledge section longer than this many tokens is split at its paragraphs.
SECTION_TOKENS = 400


def knowledge_chunks(
    path: str, text: str, count: Callable[[str], int], target: int = SECTION_TOKENS
) -> list[Chunk]:
    """A team-knowledge document cut at its headings: each section a chunk of its own (a
    heading with nothing under it joins the next), the heading path as its breadcrumb (the
    front matter's ``title`` above it when the document has no top heading), the front matter
    never in a chunk (its ``title`` and ``tags`` are matched as the chunk's context), and a
    section longer than ``target`` tokens split at its paragraphs."""
    from kbc.analyzers.drift import parse_front_matter

    lines = split_lines(text)
    if not lines:
        return []
    front = parse_front_matter(text)
    closed = front.body_line > 1 and "never closed" not in front.problem
    first = front.body_line if closed else 1  # the front matter's lines are never in a chunk
    body = lines[first - 1 :]
    sections = [
        Section(s.start + first - 1, s.end + first - 1, s.breadcrumb) for s in markdown_sections(body)
    ]
    top = any(_HEADING.match(line) and not line.startswith("##") for line in body)
    title = front.title if front.title and not top else ""
    context = " ".join(part for part in (front.title, " ".join(front.tags)) if part)
    spans: list[tuple[int, int, str]] = []
    carried: int | None = None  # the first line of heading-only sections waiting for content
    for section in sections:
        start = carried if carried is not None else section.start
        content = [line for line in lines[section.start - 1 : section.end] if line.strip()]
        if all(_HEADING.match(line) for line in content) and section is not sections[-1]:
            carried = start
            continue
        carried = None
        crumb = " > ".join(part for part in (title, section.breadcrumb) if part)
        spans.extend((s, e, crumb) for s, e in _paragraph_spans(lines, start, section.end, count, target))
    chunks = []
    for start, end, heading in spans:
        piece = "".join(lines[start - 1 : end])
        if not piece.strip():
            continue
        chunks.append(
            Chunk(
                chunk_id(path, start, end, piece),
                path,
                start,
                end,
                "knowledge",
                "markdown",
                piece,
                heading,
                "",
                (),
                "knowledge",
                context=context,
            )
        )
    return chunks


def _paragraph_spans(
    lines: Sequence[str], start: int, end: int, count: Callable[[str], int], target: int
) -> Iterator[tuple[int, int]]:
    """``start``..``end`` whole when it fits ``target`` tokens, else cut where a paragraph ends
    (a blank line outside a code fence) so each piece fits; a paragraph longer than ``target``
    is a piece of its own."""
    if count("".join(lines[start - 1 : end])) <= target:
        yield start, end
        return
    breaks: list[int] = []  # last lines of paragraphs
    in_fence = False
    for number in range(start, end + 1):
        line = lines[number - 1]
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and not line.strip() and number > start:
            breaks.append(number)
    breaks.append(end)
    piece_start = start
    previous = None
    for cut in breaks:
        if count("".join(lines[piece_start - 1 : cut])) > target and previous is not None:
            yield piece_start, previous
            piece_start = previous + 1
        previous = cut
    if piece_start <= end:
        yield piece_start, end
