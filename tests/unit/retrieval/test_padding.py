"""Padding: each chunk of code taken is shown with up to PAD lines a side that no block holds,
never entering another function, never past the budget, and never in place of its chunk."""

from collections.abc import Mapping

from hypothesis import given, settings
from hypothesis import strategies as st

from kbc.domain.models import Chunk
from kbc.index.tokencount import default_counter
from kbc.retrieval import pack as packing
from kbc.retrieval.pack import PAD, pack

COUNTER = default_counter()
FILE = {n: f"line_{n} = {n}\n" if n % 7 else "\n" for n in range(1, 201)}  # a 200-line file
FUNCTIONS = [(40, 60), (61, 90), (120, 150)]  # the file's functions (outermost spans)


def around(path: str, first: int, last: int) -> Mapping[int, str]:
    return {n: FILE[n] for n in range(first, last + 1) if n in FILE} if path == "a.py" else {}


def extents(path: str, line: int) -> tuple[int, int] | None:
    return next(((a, b) for a, b in FUNCTIONS if a <= line <= b), None) if path == "a.py" else None


def chunk(start: int, end: int, path: str = "a.py", kind: str = "code") -> Chunk:
    text = "".join(FILE[n] for n in range(start, end + 1))
    return Chunk(f"{path}:{start}", path, start, end, kind, "python", text)  # type: ignore[arg-type]


def spans(packed: packing.Packed) -> list[tuple[int, int]]:
    return [(b.start, b.end) for b in packed.blocks]


def test_a_chunk_is_padded_on_both_sides_with_the_lines_next_to_it() -> None:
    packed = pack([chunk(100, 110)], {}, 5_000, COUNTER, "", around=around, extents=extents)
    assert spans(packed) == [(100 - PAD, 110 + PAD)]
    assert packed.text.count("line_95 = 95") == 1 and "line_94 = 94" not in packed.text
    assert [c.id for c in packed.chunks] == ["a.py:100"]  # padding is no chunk of the ranking
    assert packed.blocks[0].chunks[0] == "a.py:100"  # the block's item is the chunk's


def test_padding_never_enters_another_function_but_may_run_inside_the_chunks_own() -> None:
    # a piece of the function at 61-90 that starts at 63: lines 61-62 (its own function) pad it,
    # line 60 (another function's) does not; after it, 91-95 (no function's) do
    packed = pack([chunk(63, 90)], {}, 5_000, COUNTER, "", around=around, extents=extents)
    assert spans(packed) == [(61, 95)]
    # a chunk ending at 115 is padded up to 119, not into the function starting at 120
    packed = pack([chunk(105, 115)], {}, 5_000, COUNTER, "", around=around, extents=extents)
    assert spans(packed) == [(100, 119)]


def test_no_padding_without_lines_to_pad_with_or_for_documents() -> None:
    plain = pack([chunk(100, 110)], {}, 5_000, COUNTER, "", extents=extents)
    assert spans(plain) == [(100, 110)]
    doc = pack([chunk(100, 110, "a.py", "doc")], {}, 5_000, COUNTER, "", around=around, extents=extents)
    assert spans(doc) == [(100, 110)]


def test_a_chunk_is_never_cut_for_its_own_padding() -> None:
    for budget in range(60, 200):
        bare = pack([chunk(100, 110)], {}, budget, COUNTER, "")
        padded = pack([chunk(100, 110)], {}, budget, COUNTER, "", around=around, extents=extents)
        assert padded.tokens <= budget
        shown = [b for b in padded.blocks if b.lines]
        for block in bare.blocks:  # every line the chunk shows without padding, it shows with it
            assert any(b.start <= block.start and b.end >= block.end for b in shown)
    assert spans(padded) == [(100 - PAD, 110 + PAD)]  # with room, it is padded


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 190), st.integers(0, 12)), min_size=1, max_size=8),
    st.integers(60, 3_000),
)
def test_never_over_budget_and_no_line_twice(starts: list[tuple[int, int]], budget: int) -> None:
    ranked = [chunk(s, min(200, s + n)) for s, n in starts]
    packed = pack(ranked, {}, budget, COUNTER, "# slice\n", around=around, extents=extents)
    assert packed.tokens <= budget and packed.tokens == COUNTER.count(packed.text)
    for n in range(1, 201):
        if n % 7:
            assert packed.text.count(f"line_{n} = {n}\n") <= 1
