"""What shapes a slice besides its ranking, read once from the repository: the copies of its
own definitions (:mod:`kbc.retrieval.copies`), the spans of its functions (a passage cut
inside one says so), the header its files share (:mod:`kbc.retrieval.boilerplate`), and the
order a ranking is packed in (:meth:`Shaping.packing_order`)."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence

from kbc.domain.models import Chunk, FileFacts
from kbc.index.chunks import split_lines
from kbc.index.lexical import LexicalIndex
from kbc.index.tokens import tokens
from kbc.retrieval import rank
from kbc.retrieval.boilerplate import Boilerplate
from kbc.retrieval.copies import Copies
from kbc.retrieval.depth import whole_definitions
from kbc.retrieval.matched import Matcher
from kbc.retrieval.pack import WIDE
from kbc.retrieval.query import bounded


class Shaping:
    """Each part built on first use, then kept for the reader's life."""

    def __init__(
        self,
        facts: Sequence[FileFacts],
        lexical: LexicalIndex,
        matcher: Callable[[], Matcher],
        fan_in: Callable[[], Mapping[str, int]],
    ) -> None:
        self._facts = facts
        self._lexical = lexical
        self._matcher = matcher
        self._fan_in = fan_in
        self._copies: Copies | None = None
        self._extents: dict[str, list[tuple[int, int]]] | None = None  # path -> its top functions
        self._boilerplate: Boilerplate | None = None

    def copies(self) -> Copies:
        """The repository's copies of its own definitions."""
        if self._copies is None:
            by_path = self._matcher().by_path

            def text_of(path: str, start: int, end: int) -> str:
                ids = [u.id for u in by_path.get(path, ()) if u.start <= end and u.end >= start]
                found = self._lexical.chunks(ids)
                return "".join(found[cid].text for cid in ids if cid in found)

            self._copies = Copies(self._facts, self._fan_in(), text_of)
        return self._copies

    def extent(self, path: str, line: int) -> tuple[int, int] | None:
        """The span of the outermost function or method of ``path`` holding ``line``, if any."""
        if self._extents is None:
            spans: dict[str, list[tuple[int, int]]] = {}
            for facts in self._facts:
                functions = {s.qname for s in facts.symbols if s.kind in ("function", "method")}
                outermost: list[tuple[int, int]] = []
                for span in sorted(
                    (s.start_line, s.end_line)
                    for s in facts.symbols
                    if s.qname in functions and s.parent not in functions
                ):
                    if (
                        not outermost or span[0] > outermost[-1][1]
                    ):  # a method of a class in a function: inside it
                        outermost.append(span)
                spans[facts.path] = outermost
            self._extents = spans
        outermost = self._extents.get(path, [])
        at = bisect.bisect_right(outermost, (line, WIDE)) - 1  # the last span starting at or before line
        if at >= 0 and outermost[at][0] <= line <= outermost[at][1]:
            return outermost[at]
        return None

    def lines_near(self, path: str, first: int, last: int) -> dict[int, str]:
        """Lines ``first`` to ``last`` of ``path`` as its indexed chunks hold them, without the
        header the repository's files share (what a slice pads its blocks with)."""
        units = [u.id for u in self._matcher().by_path.get(path, ()) if u.start <= last and u.end >= first]
        found = self._lexical.chunks(units)
        if self._boilerplate is None:
            self._boilerplate = Boilerplate(self._lexical.openings())
        header = self._boilerplate.lines_of(path)
        lines: dict[int, str] = {}
        for cid in units:
            chunk = found.get(cid)
            if chunk is None:
                continue
            for offset, line in enumerate(split_lines(chunk.text)):
                number = chunk.start_line + offset
                if first <= number <= last and number > header:
                    lines.setdefault(number, line)
        return lines

    def without_headers(
        self, ranked: Sequence[Chunk], query: str, count: Callable[[str], int]
    ) -> dict[str, Chunk]:
        """The chunks by id, those that open a file without the header the repository's files
        share; a chunk that is nothing but one is left out."""
        if self._boilerplate is None:
            self._boilerplate = Boilerplate(self._lexical.openings())
        asked = frozenset(tokens(bounded(query)))
        out: dict[str, Chunk] = {}
        for chunk in ranked:
            kept = self._boilerplate.trimmed(chunk, count, asked) if chunk.start_line == 1 else chunk
            if kept is not None:
                out[chunk.id] = kept
        return out

    def packing_order(
        self,
        ranked: Sequence[tuple[str, float]],
        chunks: Mapping[str, Chunk],
        budget: int,
        query: str,
        count: Callable[[str], int],
    ) -> tuple[list[Chunk], list[float]]:
        """The chunks of ``ranked`` in the order they are packed, with their scores: the heads
        of the leading files first (:func:`kbc.retrieval.rank.spread`, unless the fitted model
        ranks), each long definition or note section followed by its other pieces
        (:func:`kbc.retrieval.depth.whole_definitions`), and the header the repository's files
        share left out of the passages it opens (unless the task is about it)."""
        order = list(ranked)
        if not rank.MODEL:  # the model's order already weighs a file's next unit against the next file
            order = rank.spread(order, chunks, budget=budget)
        order, pieces = whole_definitions(
            order,
            chunks,
            self._matcher().by_path,
            self._lexical.chunks,
            budget,
            windows_of=lambda path: self._lexical.chunk_ids([path]),
        )
        every = {**chunks, **pieces} if pieces else chunks
        taken = self.without_headers([every[cid] for cid, _ in order], query, count)
        kept = [(cid, score) for cid, score in order if cid in taken]
        return [taken[cid] for cid, _ in kept], [score for _, score in kept]
