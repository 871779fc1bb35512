"""Gaps: the lines between two blocks of code of one file a few lines apart are shown, when they
fit, instead of the mark that they are not; how many lines grows with the budget."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_padding import COUNTER, around, chunk, extents, spans

from kbc.retrieval import pack as packing
from kbc.retrieval.pack import pack

# 100-105 padded to 95-110; 130-140 (inside the function at 120-150) padded to 125-145: the
# gap between the two blocks is lines 111-124, fourteen lines
RANKED = [chunk(100, 105), chunk(130, 140)]


def test_a_gap_no_wider_than_the_budget_allows_is_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(packing, "GAP_PER_1K", 3.0)  # 15 lines at 5,000 tokens
    packed = pack(RANKED, {}, 5_000, COUNTER, "", around=around, extents=extents)
    assert spans(packed) == [(95, 145)]
    assert "⋮ lines 111-124 not shown" not in packed.text and "line_120 = 120" in packed.text
    assert [c.id for c in packed.chunks] == ["a.py:100", "a.py:130"]  # the gap is no unit of the ranking


def test_gaps_are_shown_without_padding_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(packing, "PAD", 0)
    monkeypatch.setattr(packing, "GAP_PER_1K", 5.0)  # 25 lines at 5,000 tokens: 106-129 is 24
    packed = pack(RANKED, {}, 5_000, COUNTER, "", around=around, extents=extents)
    assert spans(packed) == [(100, 140)]


def test_a_wider_gap_or_a_smaller_budget_keeps_the_mark(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(packing, "GAP_PER_1K", 3.0)  # 3 lines at 1,000 tokens
    packed = pack(RANKED, {}, 1_000, COUNTER, "", around=around, extents=extents)
    assert spans(packed) == [(95, 110), (125, 145)]
    assert "⋮ lines 111-124 not shown" in packed.text
    monkeypatch.setattr(packing, "GAP_PER_1K", 0.0)
    assert spans(pack(RANKED, {}, 5_000, COUNTER, "", around=around, extents=extents)) == [
        (95, 110),
        (125, 145),
    ]


def test_a_gap_is_shown_only_when_it_fits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(packing, "GAP_PER_1K", 50.0)  # 14 lines or more from 280 tokens
    both = pack(RANKED, {}, 5_000, COUNTER, "", around=around, extents=extents)
    assert spans(both) == [(95, 145)]
    shapes = set()
    for budget in range(both.tokens - 60, both.tokens + 120):  # what is counted before the text is: wider
        packed = pack(RANKED, {}, budget, COUNTER, "", around=around, extents=extents)
        shapes.add(tuple(spans(packed)))
        assert packed.tokens <= budget
        assert [c.id for c in packed.chunks] == ["a.py:100", "a.py:130"]  # never in place of a unit
        if spans(packed) != [(95, 145)]:  # the gap left out when it does not fit: marked
            assert "not shown" in packed.text
    assert ((95, 145),) in shapes and ((95, 110), (125, 145)) in shapes  # shown with room, else marked


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 190), st.integers(0, 12)), min_size=1, max_size=8),
    st.integers(60, 3_000),
    st.floats(0, 30),
)
def test_never_over_budget_and_no_line_twice_with_gaps(
    starts: list[tuple[int, int]], budget: int, gap: float
) -> None:
    ranked = [chunk(s, min(200, s + n)) for s, n in starts]
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(packing, "GAP_PER_1K", gap)
        packed = pack(ranked, {}, budget, COUNTER, "# slice\n", around=around, extents=extents)
    assert packed.tokens <= budget and packed.tokens == COUNTER.count(packed.text)
    for n in range(1, 201):
        if n % 7:
            assert packed.text.count(f"line_{n} = {n}\n") <= 1
