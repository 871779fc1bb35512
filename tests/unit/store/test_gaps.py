"""The knowledge-gap log: what it keeps of a question."""

from pathlib import Path

from kbc.store.gaps import QUESTION_CHARS, GapLog


def test_a_pasted_megabyte_is_logged_as_its_head(tmp_path: Path) -> None:
    pasted = "why does the build fail? " + "log line of a pasted build output\n" * 30_000
    with GapLog(tmp_path / "gaps.sqlite") as log:
        log.record("ask", pasted, "qa", [], -1.0, True, now=1_000.0)
        log.record("ask", pasted, "qa", [], -1.0, True, now=1_001.0)
        (gap,) = log.gaps(now=1_002.0)
    assert gap.question == pasted[:QUESTION_CHARS] + "…" and gap.count == 2
    assert (tmp_path / "gaps.sqlite").stat().st_size < 100_000
