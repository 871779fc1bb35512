"""Packing ranked chunks into a budget, and rendering the slice.

Chunks are taken in rank order. A chunk that overlaps or touches one already
taken from the same file widens that block instead of repeating lines. The
rendered text (header, attribution lines and fences included) is counted with
the real tokenizer and never exceeds the budget; if even the best chunk does
not fit, it is cut to fit and marked as truncated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from kbc.domain.models import Chunk
from kbc.index.chunks import split_lines
from kbc.index.tokencount import TokenCounter

MIN_BLOCK_TOKENS = 12  # an attribution line and two fences, with a line of code
JOIN_SLACK = 2  # tokens a join may add beyond the parts' own counts
FENCE_LANGUAGES = {"python-stub": "python", "text": "", "ini": "ini"}


@dataclass(slots=True)
class Block:
    path: str
    start: int
    end: int
    kind: str
    language: str
    date: str
    lines: dict[int, str] = field(default_factory=dict)
    truncated: int = 0  # lines cut off the end to fit the budget

    def add(self, chunk: Chunk) -> None:
        for offset, line in enumerate(split_lines(chunk.text)):
            self.lines.setdefault(chunk.start_line + offset, line)
        self.start = min(self.start, chunk.start_line)
        self.end = max(self.end, chunk.end_line)

    def render(self, body_too: bool = True) -> str:
        """The block as Markdown; without its body it is the frame: attribution and fences."""
        body = "".join(self.lines.get(n, "\n") for n in range(self.start, self.end + 1)) if body_too else ""
        if body and not body.endswith("\n"):
            body += "\n"
        fence = "```"
        while fence in body:
            fence += "`"
        language = FENCE_LANGUAGES.get(self.language, self.language)
        date = f" · last commit {self.date}" if self.date else ""
        marker = (f"… [truncated: lines {self.end + 1}-{self.end + self.truncated} omitted to fit "
                  "the budget]\n") if self.truncated else ""
        return (f"### {self.path}:{self.start}-{self.end} ({self.kind}{date})\n"
                f"{fence}{language}\n{body}{fence}\n{marker}")


@dataclass(frozen=True, slots=True)
class Packed:
    chunks: tuple[Chunk, ...]  # taken, in rank order
    blocks: tuple[Block, ...]
    text: str
    tokens: int
    item_tokens: tuple[int, ...]  # tokens each taken chunk added


def _touches(block: Block, chunk: Chunk) -> bool:
    return (block.path == chunk.path and chunk.start_line <= block.end + 1
            and chunk.end_line >= block.start - 1)


def _text(header: str, blocks: Sequence[Block]) -> str:
    return header + "".join("\n" + b.render() for b in blocks)


def pack(ranked: Sequence[Chunk], dates: Mapping[str, str], budget: int, counter: TokenCounter,
         header: str, text_tokens: Callable[[Chunk], int] | None = None) -> Packed:
    """The best chunks that fit in ``budget`` tokens under ``header``.

    Costs are the parts' token counts (``text_tokens`` gives a chunk's own, and
    a caller may cache it); the whole text is then counted once, and should the
    joins have cost more than the slack allowed, blocks are dropped from the end
    until it fits.
    """
    size_of = text_tokens or (lambda c: counter.count(c.text))
    if counter.count(header) > budget:
        header = header.splitlines()[0][: max(0, budget)] + "\n"
        while header and counter.count(header) > budget:
            header = header[:-2] + "\n" if len(header) > 1 else ""
    blocks: list[Block] = []
    by_path: dict[str, list[int]] = {}  # a file's blocks, by index into ``blocks``
    taken: list[tuple[Chunk, int, int]] = []  # chunk, its block's index, tokens it added
    used = counter.count(header)
    for chunk in ranked:
        if budget - used < MIN_BLOCK_TOKENS:
            break
        index = next((i for i in by_path.get(chunk.path, ()) if _touches(blocks[i], chunk)), None)
        if index is not None:
            target = blocks[index]
            added = "".join(line for offset, line in enumerate(split_lines(chunk.text))
                            if chunk.start_line + offset not in target.lines)
            cost = counter.count(added) + JOIN_SLACK if added else 0
            if used + cost <= budget:
                target.add(chunk)
                used += cost
                taken.append((chunk, index, cost))
            continue
        if blocks and used + size_of(chunk) + JOIN_SLACK > budget:
            continue  # cannot fit even before its frame is counted
        block = Block(chunk.path, chunk.start_line, chunk.end_line, chunk.kind, chunk.language,
                      dates.get(chunk.path, ""))
        # The block's cost: its attribution line and fences, plus the chunk's own text
        # (counted once and cached by the caller), plus slack for merges at the joins.
        frame = counter.count("\n" + block.render(body_too=False))
        cost = frame + size_of(chunk) + JOIN_SLACK
        if used + cost > budget:
            if blocks:
                continue
            block.add(chunk)
            cut = _truncate(block, budget - used, counter)
            if cut is None:
                continue
            block, cost = cut, counter.count("\n" + cut.render())
        else:
            block.add(chunk)
        by_path.setdefault(block.path, []).append(len(blocks))
        blocks.append(block)
        used += cost
        taken.append((chunk, len(blocks) - 1, cost))
    text = _text(header, blocks)
    tokens = counter.count(text)
    while tokens > budget and blocks:  # counts of parts can differ from the whole's by a merge
        blocks.pop()
        taken = [t for t in taken if t[1] < len(blocks)]
        text = _text(header, blocks)
        tokens = counter.count(text)
    return Packed(tuple(c for c, _, _ in taken), tuple(blocks), text, tokens,
                  tuple(cost for _, _, cost in taken))


def _truncate(block: Block, room: int, counter: TokenCounter) -> Block | None:
    """The longest head of ``block`` that fits in ``room`` tokens, marked as truncated."""
    total = block.end - block.start + 1

    def head(keep: int) -> Block:
        return Block(block.path, block.start, block.start + keep - 1, block.kind, block.language,
                     block.date, {n: text for n, text in block.lines.items() if n < block.start + keep},
                     truncated=total - keep)

    low, high, best = 1, total - 1, 0
    while low <= high:
        middle = (low + high) // 2
        if counter.count("\n" + head(middle).render()) <= room:
            best, low = middle, middle + 1
        else:
            high = middle - 1
    return head(best) if best else None
