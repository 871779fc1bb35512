"""Packing by file region: never over budget, no line twice, one header per file, truncation marked."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from kbc.domain.models import Chunk
from kbc.index.tokencount import default_counter
from kbc.retrieval.pack import pack
from kbc.retrieval.rank import rrf

COUNTER = default_counter()


def chunk(path: str, start: int, end: int, word: str = "value", heading: str = "") -> Chunk:
    text = "".join(f"{word}_{n} = compute({n})\n" for n in range(start, end + 1))
    return Chunk(f"{path}:{start}", path, start, end, "code", "python", text, heading)


RANKED = [
    chunk("a.py", 1, 60),
    chunk("b.py", 1, 40, "other"),
    chunk("a.py", 49, 108),
    chunk("c.md", 1, 10, "doc"),
    chunk("a.py", 130, 140, heading="class Refund(Base)"),
]


def test_overlapping_and_adjacent_ranges_merge_and_a_file_is_shown_once_in_line_order() -> None:
    packed = pack(RANKED, {"a.py": "2026-01-02"}, 50_000, COUNTER, "# slice\n", scores=[5, 4, 3, 2, 1])
    assert [(b.path, b.start, b.end) for b in packed.blocks] == [
        ("a.py", 1, 108),
        ("a.py", 130, 140),
        ("b.py", 1, 40),
        ("c.md", 1, 10),
    ]
    assert [b.score for b in packed.blocks] == [5, 1, 4, 2]  # a block keeps its best chunk's score
    assert packed.text.count("value_60 = compute(60)") == 1
    assert packed.text.count("## a.py (code · last commit 2026-01-02)") == 1
    assert "### a.py:1-108\n" in packed.text
    assert "⋮ lines 109-129 not shown\n### a.py:130-140 · in class Refund(Base)\n" in packed.text
    assert packed.tokens == COUNTER.count(packed.text)


def test_a_chunk_whose_lines_are_all_shown_adds_nothing() -> None:
    inner = chunk("a.py", 10, 20)
    packed = pack([chunk("a.py", 1, 60), inner], {}, 50_000, COUNTER, "")
    assert [(b.start, b.end, b.chunks) for b in packed.blocks] == [(1, 60, ["a.py:1"])]


def test_a_chunk_between_two_blocks_joins_them() -> None:
    packed = pack(
        [chunk("a.py", 1, 10), chunk("a.py", 21, 30), chunk("a.py", 11, 20)], {}, 50_000, COUNTER, ""
    )
    assert [(b.start, b.end) for b in packed.blocks] == [(1, 30)]
    assert "not shown" not in packed.text


def test_a_best_item_too_big_for_the_budget_is_truncated_with_a_marker() -> None:
    packed = pack(RANKED, {}, 120, COUNTER, "# slice\n")
    assert packed.tokens <= 120
    assert len(packed.blocks) == 1 and packed.blocks[0].truncated > 0
    assert "omitted to fit the budget]" in packed.text


spans = st.tuples(st.sampled_from(["a.py", "b.py", "c/d.py"]), st.integers(1, 300), st.integers(0, 80))


@settings(max_examples=150, deadline=None)
@given(st.lists(spans, min_size=1, max_size=25), st.integers(1, 20_000))
def test_the_budget_is_never_exceeded_and_no_line_is_printed_twice(
    picked: list[tuple[str, int, int]], budget: int
) -> None:
    ranked = [chunk(path, start, start + length) for path, start, length in picked]
    packed = pack(ranked, {}, budget, COUNTER, "# kbc slice · implementation · header line\n")
    assert COUNTER.count(packed.text) == packed.tokens <= budget
    printed = re.findall(r"^value_(\d+) = compute", packed.text, re.MULTILINE)
    by_file: dict[str, list[tuple[int, int]]] = {}
    for block in packed.blocks:
        by_file.setdefault(block.path, []).append((block.start, block.end))
    for blocks in by_file.values():
        for (_, end), (start, _) in zip(blocks, blocks[1:], strict=False):
            assert end + 1 < start  # in line order, neither overlapping nor touching
    assert len(printed) == sum(b.end - b.start + 1 for b in packed.blocks if not b.truncated) + sum(
        b.end - b.start + 1 for b in packed.blocks if b.truncated
    )


def test_fences_outgrow_backticks_in_the_text() -> None:
    doc = Chunk("d", "d.md", 1, 3, "doc", "markdown", "```python\nx = 1\n```\n")
    packed = pack([doc], {}, 1000, COUNTER, "")
    assert "````markdown\n```python" in packed.text


def test_rrf_sums_reciprocal_ranks() -> None:
    fused = rrf([["a", "b"], ["b", "c"]], k=60)
    assert fused == {"a": 1 / 61, "b": 1 / 62 + 1 / 61, "c": 1 / 62}


def note(path: str, text: str) -> Chunk:
    lines = text.count("\n")
    return Chunk(f"{path}:1", path, 1, lines, "knowledge", "markdown", text, "", role="knowledge")


COPIED = (
    "# Payouts\n\nA payout is money we send to a seller every week, never before the refund window "
    "of one hundred and eighty days has closed for the orders it pays. Payouts are batched on "
    "Mondays at six in the morning, in the seller's own currency, and a seller whose account is "
    "under review is paid only once the review has ended. A payout that bounces is retried three "
    "times, one day apart, before the seller is asked to check the bank details we hold.\n"
)


def test_a_note_copied_into_another_document_is_packed_once() -> None:
    ranked = [
        note("@knowledge/t/projects/a/payouts.md", COPIED),
        note("@knowledge/t/projects/b/payouts.md", COPIED.replace("every week", "each week")),
        chunk("a.py", 1, 5),
        note("@knowledge/t/domain/other.md", "# Other\n\nSomething else entirely.\n"),
    ]
    packed = pack(ranked, {}, 50_000, COUNTER, "# slice\n", scores=[4, 3, 2, 1])
    assert [b.path for b in packed.blocks] == [
        "@knowledge/t/projects/a/payouts.md",
        "a.py",
        "@knowledge/t/domain/other.md",
    ]
    assert packed.text.count("refund window") == 1


def test_knowledge_is_shown_by_scope_in_the_places_it_took() -> None:
    ranked = [
        note("@knowledge/t/projects/a/notes.md", "# Project\n\nBatch on Mondays.\n"),
        chunk("a.py", 1, 5),
        note("@knowledge/t/conventions/money.md", "# Money\n\nCents, never floats.\n"),
        note("@knowledge/t/domain/payouts.md", "# Payouts\n\nWeekly.\n"),
        chunk("b.py", 1, 5),
    ]
    order = {
        "@knowledge/t/domain/payouts.md": 0,
        "@knowledge/t/conventions/money.md": 1,
        "@knowledge/t/projects/a/notes.md": 2,
    }
    packed = pack(ranked, {}, 50_000, COUNTER, "# slice\n", scores=[5, 4, 3, 2, 1], order=order)
    assert [b.path for b in packed.blocks] == [
        "@knowledge/t/domain/payouts.md",
        "a.py",
        "@knowledge/t/conventions/money.md",
        "@knowledge/t/projects/a/notes.md",
        "b.py",
    ]
    assert packed.tokens == COUNTER.count(packed.text)
    unordered = pack(ranked, {}, 50_000, COUNTER, "# slice\n", scores=[5, 4, 3, 2, 1])
    assert [b.path for b in unordered.blocks][0] == "@knowledge/t/projects/a/notes.md"


def test_a_passage_cut_inside_a_definition_says_which_of_its_lines_are_left_out() -> None:
    def extents(path: str, line: int) -> tuple[int, int] | None:
        return (10, 80) if 10 <= line <= 80 else None

    middle = chunk("a.py", 30, 50, heading="def run(self)")
    packed = pack([middle], {}, 50_000, COUNTER, "# slice\n", extents=extents)
    assert "⋮ lines 10-29 not shown\n### a.py:30-50 · in def run(self)\n" in packed.text
    assert packed.text.endswith("```\n⋮ lines 51-80 not shown\n")
    whole = pack([chunk("a.py", 10, 80)], {}, 50_000, COUNTER, "# slice\n", extents=extents)
    assert "not shown" not in whole.text
    assert packed.tokens == COUNTER.count(packed.text) and whole.tokens == COUNTER.count(whole.text)


@settings(max_examples=40, deadline=None)
@given(
    budget=st.integers(min_value=20, max_value=600),
    spans=st.lists(st.integers(1, 90), min_size=1, max_size=6),
)
def test_marked_cuts_never_break_the_budget(budget: int, spans: list[int]) -> None:
    ranked = [chunk("a.py", s, s + 7) for s in spans]
    packed = pack(ranked, {}, budget, COUNTER, "# s\n", extents=lambda path, line: (1, 200))
    assert packed.tokens <= budget
