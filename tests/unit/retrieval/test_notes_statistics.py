"""Team notes ranked in their own statistics: a word most notes hold weighs little, in whatever
language, so the note that answers outranks the one that repeats the language's function words."""

from __future__ import annotations

from kbc.domain.models import Chunk
from kbc.retrieval.notes import NoteStatistics


def note(path: str, text: str, heading: str = "") -> Chunk:
    return Chunk(
        path, f"@knowledge/de/{path}", 1, text.count("\n") + 1, "knowledge", "markdown", text, heading
    )


NOTES = [
    note(
        "releases.md",
        "Vom 15. November bis zum 2. Januar wird nichts ausgerollt, ein Änderungsstopp für das "
        "Weihnachtsgeschäft.",
        "Releases > Änderungsstopp",
    ),
    note(
        "lager.md",
        "Es gibt vor jeder Inventur einen Abgleich, und es gibt vor dem Versand einen Check. Es "
        "ist so, dass es vor allem einen Plan gibt.",
        "Lager > Inventur",
    ),
    note(
        "zahlungen.md",
        "Es gibt einen Zahlungsdienst, und es gibt vor der Buchung einen Abgleich.",
        "Zahlungen",
    ),
    note("rechnungen.md", "Eine gestellte Rechnung wird nie geändert; es gibt einen Storno.", "Rechnungen"),
]


def test_the_answering_note_outranks_the_one_repeating_function_words() -> None:
    found = NoteStatistics(NOTES).search("Gibt es vor Weihnachten einen Änderungsstopp?", 10)
    assert found[0][0] == "releases.md"
    assert all(score > 0 for _, score in found)
    assert found[-1][0] != "releases.md" and len(found) == 4  # every note holds a word of the question


def test_only_notes_holding_a_word_of_the_question_are_found_best_first() -> None:
    statistics = NoteStatistics(NOTES)
    found = statistics.search("Storno einer Rechnung", 10)
    assert [cid for cid, _ in found][0] == "rechnungen.md"
    assert "releases.md" not in {cid for cid, _ in found}
    scores = [score for _, score in found]
    assert scores == sorted(scores, reverse=True)
    assert len(statistics.search("Storno einer Rechnung", 1)) == 1
    assert statistics.search("kubernetes", 10) == [] and statistics.search("", 10) == []


def test_no_notes_no_hits() -> None:
    empty = NoteStatistics([])
    assert len(empty) == 0
    assert empty.search("Änderungsstopp", 5) == []
