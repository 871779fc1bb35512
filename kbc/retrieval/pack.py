"""Packing ranked chunks into a budget by file region, and rendering the slice.

Chunks are taken in rank order. A chunk that overlaps or touches lines already
taken from its file widens (or joins) those blocks instead of repeating lines,
so no line is ever printed twice. The slice shows each file once, in the order
of its best chunk, under one header; its blocks follow in line order, each
with its ``path:start-end`` attribution and the breadcrumb of the definitions
around it, and the lines left out between two blocks are marked.

Each chunk of code taken is padded with up to ``PAD`` lines on each side that the slice does
not hold yet, when the budget allows, never lines of another function: the line a change goes
after, the blank lines and comments between two definitions, the statements before a piece of
a long function. The lines between two blocks of code of one file are shown rather than
marked as left out when they fit and are few for the budget (``GAP_PER_1K``). Padding and gaps
are given back before any chunk when the whole text is counted.

The rendered text (header, attribution lines and fences included) is counted
with the real tokenizer and never exceeds the budget; if even the best chunk
does not fit, its head is kept and marked as truncated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from kbc.domain.models import Chunk
from kbc.index.chunks import split_lines
from kbc.index.tokencount import TokenCounter

# The span of the outermost function or method holding a line of a file, if any: a passage
# cut inside a definition says which of its lines are left out.
Extents = Callable[[str, int], tuple[int, int] | None]
# The lines of a file from ``first`` to ``last`` as the index holds them (line number -> text);
# lines it does not give (past the file's end, a header left out) are not padded with.
Around = Callable[[str, int, int], Mapping[int, str]]
PAD = 5  # lines a block of code is padded with on each side, when the budget allows (0: none)
PAD_PREFIX = "pad:"  # the ids of padding pseudo-chunks
# The lines between two blocks of code of one file are shown, when they fit, instead of the mark
# that they are not, when they are at most this many lines for each 1,000 tokens of the budget
# (6 at 2,000, 39 at 13,000; 0: never). Chosen leaving each repository out (RESULTS.md, "Gaps").
GAP_PER_1K = 3.0
MARK_CUTS = True  # False: only the lines between two blocks are marked (for comparison)
MIN_BLOCK_TOKENS = 12  # an attribution line and two fences, with a line of code
JOIN_SLACK = 2  # tokens a join may add beyond the parts' own counts
WIDE = 9_999_999  # line numbers at least as long to write as any file's
FENCE_LANGUAGES = {"python-stub": "python", "text": "", "ini": "ini"}


@dataclass(slots=True)
class Block:
    """Consecutive lines of one file, printed once under one attribution line."""

    path: str
    start: int
    end: int
    kind: str = "code"
    lines: dict[int, str] = field(default_factory=dict)
    crumbs: dict[int, str] = field(default_factory=dict)  # a taken chunk's first line -> its breadcrumb
    chunks: list[str] = field(default_factory=list)  # ids, in the order taken
    score: float = 0.0  # of the best chunk in it
    tokens: int = 0  # what its chunks added to the slice
    truncated: int = 0  # lines cut off the end to fit the budget

    def add(self, chunk: Chunk) -> None:
        for offset, line in enumerate(split_lines(chunk.text)):
            self.lines.setdefault(chunk.start_line + offset, line)
        self.start = min(self.start, chunk.start_line)
        self.end = max(self.end, chunk.end_line)
        if chunk.heading:
            self.crumbs.setdefault(chunk.start_line, chunk.heading)

    def absorb(self, other: Block) -> None:
        for number, line in other.lines.items():
            self.lines.setdefault(number, line)
        for number, crumb in other.crumbs.items():
            self.crumbs.setdefault(number, crumb)
        self.start, self.end = min(self.start, other.start), max(self.end, other.end)
        self.chunks.extend(other.chunks)
        self.score = max(self.score, other.score)
        self.tokens += other.tokens

    def breadcrumb(self) -> str:
        return self.crumbs.get(self.start, "")

    def render(self, language: str, body_too: bool = True) -> str:
        """The block as Markdown; without its body it is the frame: attribution and fences."""
        body = "".join(self.lines.get(n, "\n") for n in range(self.start, self.end + 1)) if body_too else ""
        if body and not body.endswith("\n"):
            body += "\n"
        fence = "```"
        while fence in body:
            fence += "`"
        crumb = f" · in {self.breadcrumb()}" if self.breadcrumb() else ""
        marker = (
            (f"… [truncated: lines {self.end + 1}-{self.end + self.truncated} omitted to fit the budget]\n")
            if self.truncated
            else ""
        )
        return (
            f"### {self.path}:{self.start}-{self.end}{crumb}\n"
            f"{fence}{FENCE_LANGUAGES.get(language, language)}\n{body}{fence}\n{marker}"
        )


@dataclass(slots=True)
class FileSection:
    """Every block taken from one file."""

    path: str
    kind: str
    language: str
    date: str
    blocks: list[Block] = field(default_factory=list)  # in line order

    def title(self) -> str:
        # a file's date is its last commit's day; a knowledge document's says which it is
        said = f"last commit {self.date}" if self.date[:1].isdigit() else self.date
        date = f" · {said}" if said else ""
        return f"## {self.path} ({self.kind}{date})\n"

    def render(self, extents: Extents | None = None) -> str:
        """The file's title and blocks, the lines between two blocks marked as not shown, and
        so the lines of a definition that its first block starts after or its last block ends
        before (``extents``)."""
        parts = ["\n", self.title()]
        previous: Block | None = None
        for block in self.blocks:
            if previous is not None:
                parts.append(f"⋮ lines {previous.end + 1}-{block.start - 1} not shown\n")
            elif (
                extents is not None
                and (around := extents(self.path, block.start))
                and around[0] < block.start
            ):
                parts.append(f"⋮ lines {around[0]}-{block.start - 1} not shown\n")
            parts.append(block.render(self.language))
            previous = block
        if previous is not None and extents is not None and not previous.truncated:
            around = extents(self.path, previous.end)
            if around and around[1] > previous.end:
                parts.append(f"⋮ lines {previous.end + 1}-{around[1]} not shown\n")
        return "".join(parts)

    def touching(self, chunk: Chunk) -> list[int]:
        return [
            i
            for i, b in enumerate(self.blocks)
            if chunk.start_line <= b.end + 1 and chunk.end_line >= b.start - 1
        ]

    def overlapping(self, chunk: Chunk) -> bool:
        return any(chunk.start_line <= b.end and chunk.end_line >= b.start for b in self.blocks)

    def new_lines(self, chunk: Chunk) -> str:
        taken = [(b.start, b.end) for b in self.blocks]
        return "".join(
            line
            for offset, line in enumerate(split_lines(chunk.text))
            if not any(s <= chunk.start_line + offset <= e for s, e in taken)
        )

    def place(self, chunk: Chunk, score: float, cost: int) -> None:
        """Add ``chunk``: widen the blocks it touches (joining them), or open a new one."""
        block = Block(
            chunk.path,
            chunk.start_line,
            chunk.end_line,
            chunk.kind,
            chunks=[chunk.id],
            score=score,
            tokens=cost,
        )
        block.add(chunk)
        keep = []
        for existing in self.blocks:
            if chunk.start_line <= existing.end + 1 and chunk.end_line >= existing.start - 1:
                existing.absorb(block)
                block = existing
            else:
                keep.append(existing)
        keep.append(block)
        self.blocks = sorted(keep, key=lambda b: b.start)


@dataclass(frozen=True, slots=True)
class Packed:
    blocks: tuple[Block, ...]  # in printed order
    text: str
    tokens: int
    chunks: tuple[Chunk, ...] = ()  # taken, in rank order


NEAR_DUPLICATE = 0.85  # Jaccard of two knowledge chunks' word shingles past which one is left out
SHINGLE = 5  # words in a shingle
UNORDERED = 1_000_000  # the place of a knowledge document ``order`` does not rank


def shingles(text: str) -> frozenset[str]:
    """The runs of SHINGLE words of ``text`` (lower-cased; a shorter text is one shingle)."""
    words = text.lower().split()
    if len(words) <= SHINGLE:
        return frozenset([" ".join(words)]) if words else frozenset()
    return frozenset(" ".join(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1))


def jaccard(one: frozenset[str], other: frozenset[str]) -> float:
    return len(one & other) / len(one | other) if one and other else 0.0


def _in_order(sections: list[FileSection], order: Mapping[str, int]) -> list[FileSection]:
    """The knowledge sections sorted by ``order`` (then by their place) in the places they took."""
    places = [i for i, s in enumerate(sections) if s.kind == "knowledge"]
    if len(places) < 2 or not order:
        return sections
    ranked = sorted(places, key=lambda i: (order.get(sections[i].path, UNORDERED), i))
    placed = list(sections)
    for place, index in zip(places, ranked, strict=True):
        placed[place] = sections[index]
    return placed


def _text(header: str, sections: Sequence[FileSection], extents: Extents | None = None) -> str:
    return header + "".join(s.render(extents) for s in sections)


def _layout(taken: Sequence[tuple[Chunk, float, int]], dates: Mapping[str, str]) -> list[FileSection]:
    sections: dict[str, FileSection] = {}
    for chunk, score, cost in taken:
        section = sections.get(chunk.path)
        if section is None:
            section = sections[chunk.path] = FileSection(
                chunk.path, chunk.kind, chunk.language, dates.get(chunk.path, "")
            )
        section.place(chunk, score, cost)
    return list(sections.values())


def pack(  # noqa: C901, PLR0913 - one loop whose steps share its state; what it reads of the repository
    ranked: Sequence[Chunk],
    dates: Mapping[str, str],
    budget: int,
    counter: TokenCounter,
    header: str,
    text_tokens: Callable[[Chunk], int] | None = None,
    scores: Sequence[float] | None = None,
    order: Mapping[str, int] | None = None,
    extents: Extents | None = None,
    around: Around | None = None,
) -> Packed:
    """The best chunks that fit in ``budget`` tokens under ``header``, each chunk of code
    padded with the lines ``around`` gives next to it (up to ``PAD`` a side) when they fit.

    Team knowledge is packed once: a knowledge chunk nearly the same as one taken from another
    document (word shingles, Jaccard at least NEAR_DUPLICATE) is left out; ``order`` ranks
    knowledge documents (by scope), and the slice's knowledge documents are shown in that
    order, in the places they took, each kind's own order kept otherwise.

    Costs are the parts' token counts (``text_tokens`` gives a chunk's own, and a
    caller may cache it; a chunk that shares lines with taken ones costs only its
    new lines); the whole text is then counted once, and should the joins have cost
    more than the slack allowed, the last chunks taken are given back until it fits.

    A passage cut inside a function or method (``extents``) is marked: the definition's lines
    it leaves out are named, never silently dropped.
    """
    size_of = text_tokens or (lambda c: counter.count(c.text))
    spans_of = extents  # what guards the padding, marked cuts or not
    extents = extents if MARK_CUTS else None
    if counter.count(header) > budget:
        header = header.splitlines()[0][: max(0, budget)] + "\n"
        while header and counter.count(header) > budget:
            header = header[:-2] + "\n" if len(header) > 1 else ""
    sections: dict[str, FileSection] = {}
    taken: list[tuple[Chunk, float, int]] = []
    pads: list[tuple[Chunk, float, int]] = []  # the lines next to taken code (given back first)
    used = counter.count(header)
    frames: dict[tuple[str, str, str], int] = {}
    titles: dict[str, int] = {}
    elision = counter.count(f"⋮ lines {WIDE}-{WIDE} not shown\n")
    widest = int(GAP_PER_1K * budget / 1000)  # the widest gap between two blocks shown
    tried: set[tuple[str, int, int]] = set()  # the gaps read (path, first, last)

    def frame_cost(chunk: Chunk) -> int:
        """A block's attribution line and fences, counted once per file and breadcrumb with the
        widest line numbers (the exact count of the whole text comes last)."""
        key = (chunk.path, chunk.heading, chunk.language)
        if key not in frames:
            frame = Block(chunk.path, WIDE, WIDE, crumbs={WIDE: chunk.heading} if chunk.heading else {})
            frames[key] = counter.count(frame.render(chunk.language, body_too=False))
        return frames[key]

    known: list[tuple[str, frozenset[str]]] = []  # knowledge taken: path, shingles

    for index, chunk in enumerate(ranked):
        if budget - used < MIN_BLOCK_TOKENS:
            break
        score = scores[index] if scores is not None else 0.0
        section = sections.get(chunk.path)
        overlapping = section is not None and section.overlapping(chunk)
        shingled = shingles(chunk.text) if chunk.kind == "knowledge" else frozenset()
        if shingled and any(
            path != chunk.path and jaccard(shingled, other) >= NEAR_DUPLICATE for path, other in known
        ):
            continue  # the same words, copied into another document: packed once
        if taken and not overlapping and size_of(chunk) + JOIN_SLACK > budget - used:
            continue  # cannot fit even before its frame is counted
        cost = 0
        if section is None:
            section = FileSection(chunk.path, chunk.kind, chunk.language, dates.get(chunk.path, ""))
            cost += titles.setdefault(chunk.path, counter.count("\n" + section.title()))
        touching = section.touching(chunk)
        if overlapping:
            added = section.new_lines(chunk)
            if not added:
                continue  # every line already in the slice
            cost += counter.count(added) + JOIN_SLACK
        elif touching:
            cost += size_of(chunk) + JOIN_SLACK  # its lines join a block: no frame of its own
        else:
            cost += frame_cost(chunk) + size_of(chunk) + JOIN_SLACK
            if section.blocks:
                cost += elision
            cost += elision * _cut_sides(chunk, extents)
        if used + cost > budget:
            if taken or touching:
                continue
            first = _truncated_first(chunk, section, header, budget, counter, score)
            if first is not None:
                return first
            continue
        section.place(chunk, score, cost)
        sections.setdefault(chunk.path, section)
        taken.append((chunk, score, cost))
        used += cost
        if around is not None and chunk.kind == "code":  # padding (none when PAD is 0), then gaps
            for pad in _pads(chunk, section, around, spans_of):
                padding = counter.count(pad.text) + JOIN_SLACK
                if used + padding <= budget:
                    section.place(pad, 0.0, padding)
                    pads.append((pad, 0.0, padding))
                    used += padding
            for gap in _gaps(section, around, widest, tried):
                filling = counter.count(gap.text) + JOIN_SLACK - elision
                if used + filling <= budget:
                    section.place(gap, 0.0, filling)
                    pads.append((gap, 0.0, filling))
                    used += filling
        if shingled:
            known.append((chunk.path, shingled))
    while True:
        laid = _in_order(_layout([*taken, *pads], dates), order or {})
        text = _text(header, laid, extents)
        tokens = counter.count(text)
        if tokens <= budget or not taken:
            break
        (pads or taken).pop()  # the parts' counts can differ from the whole's at a join: padding goes first
    return Packed(tuple(b for s in laid for b in s.blocks), text, tokens, tuple(c for c, _, _ in taken))


def _pads(chunk: Chunk, section: FileSection, around: Around, extents: Extents | None) -> list[Chunk]:
    """The lines within ``PAD`` of ``chunk`` on each side that no block of its file holds and
    that run on from it without entering another function (``extents``: a line of the function
    the chunk's edge is in, or of none, may pad it; a line of another function may not), each
    side as a pseudo-chunk."""
    out = []
    for first, last, edge, step in (
        (max(1, chunk.start_line - PAD), chunk.start_line - 1, chunk.start_line - 1, -1),
        (chunk.end_line + 1, chunk.end_line + PAD, chunk.end_line + 1, 1),
    ):
        if first > last:
            continue
        lines = around(chunk.path, first, last)
        own = extents(chunk.path, edge - step) if extents is not None else None
        free = [
            n
            for n in lines
            if first <= n <= last
            and not any(b.start <= n <= b.end for b in section.blocks)
            and (extents is None or extents(chunk.path, n) in (None, own))
        ]
        run = _next_to(free, edge, step)
        if run:
            out.append(_lines_of(chunk.path, chunk.language, lines, run[0], run[-1]))
    return out


def _lines_of(path: str, language: str, lines: Mapping[int, str], first: int, last: int) -> Chunk:
    """Lines ``first`` to ``last`` of ``path`` as a pseudo-chunk of code (padding or a gap)."""
    return Chunk(
        id=f"{PAD_PREFIX}{path}:{first}-{last}",
        path=path,
        kind="code",
        language=language,
        start_line=first,
        end_line=last,
        text="".join(lines[n] for n in range(first, last + 1)),
    )


def _gaps(section: FileSection, around: Around, widest: int, tried: set[tuple[str, int, int]]) -> list[Chunk]:
    """The lines between two blocks of code of ``section`` at most ``widest`` lines apart, each gap
    whole as a pseudo-chunk (none when ``around`` does not give every line of it), but for those
    in ``tried``: what is left of the budget only shrinks, so a gap that did not fit never will."""
    out = []
    for before, after in zip(section.blocks, section.blocks[1:], strict=False):
        first, last = before.end + 1, after.start - 1
        if widest <= 0 or before.kind != "code" or not first <= last <= first + widest - 1:
            continue
        if (section.path, first, last) in tried:
            continue
        tried.add((section.path, first, last))
        lines = around(section.path, first, last)
        if all(n in lines for n in range(first, last + 1)):
            out.append(_lines_of(section.path, section.language, lines, first, last))
    return out


def _next_to(free: Sequence[int], edge: int, step: int) -> list[int]:
    """The free lines that run on without a gap from ``edge`` (a block's first line less one,
    going up the file with ``step`` -1, or its last plus one, going down with 1), in line order."""
    numbers, run, line = set(free), [], edge
    while line in numbers:
        run.append(line)
        line += step
    return sorted(run)


def _cut_sides(chunk: Chunk, extents: Extents | None) -> int:
    """How many ends of ``chunk`` fall inside a definition that goes on past them (0 to 2)."""
    if extents is None:
        return 0
    first, last = extents(chunk.path, chunk.start_line), extents(chunk.path, chunk.end_line)
    return int(bool(first and first[0] < chunk.start_line)) + int(bool(last and last[1] > chunk.end_line))


def _truncated_first(
    chunk: Chunk, section: FileSection, header: str, budget: int, counter: TokenCounter, score: float
) -> Packed | None:
    """The longest head of the best chunk that fits, alone in the slice, marked as truncated."""
    lines = split_lines(chunk.text)
    total = len(lines)

    def head(keep: int) -> tuple[str, Block]:
        block = Block(
            chunk.path,
            chunk.start_line,
            chunk.start_line + keep - 1,
            chunk.kind,
            chunks=[chunk.id],
            score=score,
            truncated=total - keep,
        )
        block.lines = {chunk.start_line + i: line for i, line in enumerate(lines[:keep])}
        if chunk.heading:
            block.crumbs[chunk.start_line] = chunk.heading
        alone = FileSection(section.path, section.kind, section.language, section.date, [block])
        return _text(header, [alone]), block

    low, high, best = 1, total - 1, 0
    while low <= high:
        middle = (low + high) // 2
        if counter.count(head(middle)[0]) <= budget:
            best, low = middle, middle + 1
        else:
            high = middle - 1
    if not best:
        return None
    text, block = head(best)
    tokens = counter.count(text)
    block.tokens = tokens - counter.count(header)
    return Packed((block,), text, tokens, (chunk,))
