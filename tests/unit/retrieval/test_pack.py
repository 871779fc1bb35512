"""Packing: never over budget, overlapping windows merged, truncation marked."""

from hypothesis import given, settings
from hypothesis import strategies as st

from kbc.domain.models import Chunk
from kbc.index.tokencount import default_counter
from kbc.retrieval.pack import pack
from kbc.retrieval.rank import rrf

COUNTER = default_counter()


def chunk(path: str, start: int, end: int, word: str = "value") -> Chunk:
    text = "".join(f"{word}_{n} = compute({n})\n" for n in range(start, end + 1))
    return Chunk(f"{path}:{start}", path, start, end, "code", "python", text)


RANKED = [chunk("a.py", 1, 60), chunk("a.py", 49, 108), chunk("b.py", 1, 40, "other"),
          chunk("c.md", 1, 10, "doc")]


def test_overlapping_windows_of_a_file_become_one_block() -> None:
    packed = pack(RANKED, {"a.py": "2026-01-02"}, 50_000, COUNTER, "# slice\n")
    assert [(b.path, b.start, b.end) for b in packed.blocks] == [
        ("a.py", 1, 108), ("b.py", 1, 40), ("c.md", 1, 10)]
    assert packed.text.count("value_60 = compute(60)") == 1
    assert "### a.py:1-108 (code · last commit 2026-01-02)" in packed.text
    assert packed.tokens == COUNTER.count(packed.text)


def test_a_best_item_too_big_for_the_budget_is_truncated_with_a_marker() -> None:
    packed = pack(RANKED, {}, 120, COUNTER, "# slice\n")
    assert packed.tokens <= 120
    assert len(packed.blocks) == 1 and packed.blocks[0].truncated > 0
    assert "omitted to fit the budget]" in packed.text


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 50_000))
def test_the_budget_is_never_exceeded(budget: int) -> None:
    packed = pack(RANKED, {}, budget, COUNTER, "# kbc slice · implementation · header line\n")
    assert COUNTER.count(packed.text) == packed.tokens <= budget


def test_fences_outgrow_backticks_in_the_text() -> None:
    doc = Chunk("d", "d.md", 1, 3, "doc", "markdown", "```python\nx = 1\n```\n")
    packed = pack([doc], {}, 1000, COUNTER, "")
    assert "````markdown\n```python" in packed.text


def test_rrf_sums_reciprocal_ranks() -> None:
    fused = rrf([["a", "b"], ["b", "c"]], k=60)
    assert fused == {"a": 1 / 61, "b": 1 / 62 + 1 / 61, "c": 1 / 62}
