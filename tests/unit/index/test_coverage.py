"""The share of a query's words a chunk holds, each weighed by its rarity: the same scale in
every corpus."""

from pathlib import Path

from kbc.domain.models import Chunk
from kbc.index.lexical import LexicalIndex


def test_a_chunk_holding_every_word_covers_the_query_and_rare_words_weigh_more(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path / "lexical.sqlite")
    texts = {
        "note": "Members may ask for a refund within 90 days of delivery.",
        "days": "def business_days(start, end): count the days between two dates",
        "other": "def session(): keep cookies across requests",
    }
    for number in range(6):
        texts[f"filler{number}"] = f"def helper_{number}(): return the days value {number}"
    index.replace_files(
        [], [Chunk(cid, f"{cid}.py", 1, 1, "code", "python", text) for cid, text in texts.items()], []
    )
    index.commit()
    found = index.coverage("may members ask for a refund within days of delivery", list(texts))
    assert found["note"] == 1.0
    assert 0 < found["days"] < 0.2  # a common word holds little of the question
    assert found["other"] == 0.0
    index.close()
