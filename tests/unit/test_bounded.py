"""What a served store keeps between requests: bounded by the bytes it holds, least recently
used dropped first, a value larger than the bound never kept."""

from __future__ import annotations

from kbc.domain.models import Chunk
from kbc.retrieval.results import Evidence, Ranking, Slice, SliceItem
from kbc.services.bounded import Bounded, ranking_bytes, slice_bytes


def sized(n: int) -> str:
    return "x" * n


def test_past_its_bytes_the_least_recently_used_go_first() -> None:
    kept: Bounded[str, str] = Bounded(max_bytes=300, entries=100, size=len)
    kept.put("a", sized(100))
    kept.put("b", sized(100))
    kept.put("c", sized(100))
    assert kept.get("a") == sized(100)  # "a" is now the most recently used
    kept.put("d", sized(100))
    assert "b" not in kept and all(k in kept for k in "acd")
    assert kept.bytes == 300 and len(kept) == 3


def test_past_its_count_the_oldest_go_even_when_small() -> None:
    kept: Bounded[int, str] = Bounded(max_bytes=10_000, entries=2, size=len)
    for key in range(5):
        kept.put(key, "v")
    assert [k for k in range(5) if k in kept] == [3, 4]


def test_a_value_larger_than_the_bound_is_not_kept_and_evicts_nothing() -> None:
    kept: Bounded[str, str] = Bounded(max_bytes=100, entries=10, size=len)
    kept.put("small", sized(40))
    kept.put("huge", sized(101))
    assert "huge" not in kept and kept.get("small") == sized(40) and kept.bytes == 40


def test_replacing_a_value_counts_it_once_and_zero_keeps_nothing() -> None:
    kept: Bounded[str, str] = Bounded(max_bytes=100, entries=10, size=len)
    kept.put("a", sized(60))
    kept.put("a", sized(30))
    assert kept.bytes == 30 and len(kept) == 1
    kept.clear()
    assert kept.bytes == 0 and kept.get("a") is None
    nothing: Bounded[str, str] = Bounded(max_bytes=0, entries=10, size=lambda v: len(v) + 1)
    nothing.put("a", "")
    assert len(nothing) == 0 and nothing.get("a") is None


def test_sizes_grow_with_the_texts_held() -> None:
    evidence = Evidence(lexical_hits=1, best_similarity=-1.0, scores=(1.0,))
    item = SliceItem(id="c", path="a.py", start_line=1, end_line=2, kind="code", score=1.0, tokens=3)

    def answered(text: str) -> tuple[Slice, Evidence]:
        found = Slice(
            use_case="qa", budget=10, tokens=3, fingerprint="f", retrieval="lexical", items=(item,), text=text
        )
        return found, evidence

    assert slice_bytes(answered(sized(10_000))) - slice_bytes(answered(sized(1_000))) == 9_000

    def ranked(text: str) -> Ranking:
        chunk = Chunk("c", "a.py", 1, 2, "code", "python", text)
        return Ranking([("c", 1.0)], {"c": chunk}, evidence)

    assert ranking_bytes(ranked(sized(5_000))) - ranking_bytes(ranked(sized(500))) == 4_500
