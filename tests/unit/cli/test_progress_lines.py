"""How a pass's events read on stderr: plain lines off a terminal, one line rewritten in place
on one, and a stage's summary on stdout as soon as it comes."""

from __future__ import annotations

import pytest

from kbc.cli.progress import Lines, describe, event_data
from kbc.domain.progress import PassEvent

EVENTS = [
    PassEvent("start", "secrets", 474, "files"),
    PassEvent("progress", "secrets", 474, "files", 210, 2.2),
    PassEvent("progress", "secrets", 474, "files", 420, 6.3, 1.2),
    PassEvent("done", "secrets", 474, "files", 474, 6.4),
    PassEvent("start", "graph"),
    PassEvent("done", "graph", seconds=0.52),
    PassEvent("summary", "analyze", result="3 symbols"),
]


def test_each_event_reads_as_a_line() -> None:
    assert [describe(e) for e in EVENTS[:-1]] == [
        "secrets: 474 files…",
        "secrets: 210/474 files · 2 s",
        "secrets: 420/474 files · 6 s · about 1 s left",
        "secrets: 474 files in 6.4 s",
        "graph…",
        "graph: done in 0.5 s",
    ]
    assert describe(PassEvent("progress", "embed", 40, "units")) == "embed: 40 units…"


def test_off_a_terminal_every_event_is_a_plain_line(capsys: pytest.CaptureFixture[str]) -> None:
    lines = Lines(lambda event: f"summary of {event.name}: {event.result}", terminal=False)
    for event in EVENTS:
        lines(event)
    lines.close()
    out, err = capsys.readouterr()
    assert "\r" not in err and err.splitlines() == [describe(e) for e in EVENTS[:-1]]
    assert out == "summary of analyze: 3 symbols\n"


def test_on_a_terminal_a_pass_has_one_line_rewritten_until_it_is_done(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = Lines(lambda event: "", terminal=True)
    for event in EVENTS[:4]:
        lines(event)
    _, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.endswith("secrets: 474 files in 6.4 s\n")
    assert err.count("\r") == 4
    lines(EVENTS[4])  # a pass stopped by an error: its line is ended before the error is said
    lines.close()
    _, err = capsys.readouterr()
    assert err.endswith("graph…\n")


def test_a_json_event_holds_the_pass_its_kind_and_counts() -> None:
    assert event_data(EVENTS[2]) == {
        "kind": "progress",
        "pass": "secrets",
        "total": 474,
        "unit": "files",
        "done": 420,
        "seconds": 6.3,
        "eta": 1.2,
    }
    assert event_data(EVENTS[0])["kind"] == "start" and "eta" not in event_data(EVENTS[0])
    assert event_data(EVENTS[-1]) == {"kind": "summary", "pass": "analyze", "summary": "3 symbols"}
