"""The progress a pass reports: when it says how far it has come, and when it dares say how
long it has left, told by an injected clock (never the wall clock)."""

from __future__ import annotations

import pytest

from kbc.domain.progress import PassEvent, Reporter, eta


class Clock:
    """Seconds that pass only when a test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def run(total: int, steps: list[tuple[float, int]], skipped: int = 0) -> list[PassEvent]:
    """The events of a pass of ``total`` items: ``skipped`` found done at once, then for each
    step, ``seconds`` later, ``items`` more done one by one."""
    clock, events = Clock(), []
    reporter = Reporter(events.append, clock=clock)
    with reporter.running("analyze", total, "files") as report:
        report.skip(skipped)
        for seconds, items in steps:
            for _ in range(items):
                clock.now += seconds / items
                report.advance()
    return events


def progress(events: list[PassEvent]) -> list[PassEvent]:
    return [e for e in events if e.kind == "progress"]


def test_no_eta_before_a_tenth_of_the_items_timed_over_five_seconds() -> None:
    assert eta(9, 100, 60.0) is None  # a minute, but under a tenth of the items
    assert eta(50, 100, 4.9) is None  # half the items, but under five seconds
    assert eta(50, 100, 20.0, first=(40, 16.0)) is None  # the rate timed over four seconds only
    assert eta(0, 100, 60.0) is None and eta(100, 100, 60.0) is None  # nothing done, or all
    assert eta(3, 0, 60.0) is None  # a pass that does not count its items
    assert eta(10, 100, 5.0) == pytest.approx(45.0)  # 10 items in 5 s: 90 more in 45 s
    assert eta(50, 100, 20.0, first=(1, 6.0)) == pytest.approx(50 * 14 / 49)


def test_a_slow_start_gives_no_eta_and_the_rate_after_it_a_true_one() -> None:
    # A pool's workers start for six seconds, then 10 files a second come: the first file
    # alone, six seconds in, would have said 30 minutes (6 s x 299 files left) for a pass of 36 s.
    events = run(300, [(6.0, 1), (29.9, 299)])
    assert events[0] == PassEvent("start", "analyze", 300, "files")
    first, *_ = progress(events)
    assert (first.done, first.eta) == (1, None)
    estimated = [e for e in progress(events) if e.eta is not None]
    assert estimated, "an ETA once enough is seen"
    for event in progress(events):
        timed = event.seconds - 6.0
        if event.eta is None:
            assert timed < 5 or event.done < 30
        else:
            assert event.eta == pytest.approx((300 - event.done) / 10, rel=0.05)
    assert estimated[0].seconds - 6.0 == pytest.approx(5.0, abs=2.1)  # the first chance after 5 s


def test_progress_is_said_at_most_every_interval_and_the_end_at_once() -> None:
    events = run(1000, [(30.0, 1000)])  # a file every 30 ms
    said = progress(events)
    assert said and all(b.seconds - a.seconds >= 2.0 for a, b in zip(said, said[1:], strict=False))
    assert said[0].seconds >= 2.0  # none before two seconds: the start line said it all
    assert len(said) <= 15
    assert events[-1].kind == "done" and events[-1].done == 1000
    assert events[-1].seconds == pytest.approx(30.0)


def test_items_found_in_a_cache_count_as_done_but_not_in_the_rate() -> None:
    # 900 of 1000 files cached, then a pool starting for 5 s, then 10 files a second.
    events = run(1000, [(5.0, 1), (9.9, 99)], skipped=900)
    estimated = [e for e in progress(events) if e.eta is not None]
    assert estimated
    for event in estimated:
        assert event.done > 900
        assert event.eta == pytest.approx((1000 - event.done) / 10, rel=0.05)


def test_a_count_known_only_once_the_pass_began_is_said_at_once() -> None:
    clock, events = Clock(), []
    with Reporter(events.append, clock=clock).running("embed") as report:
        clock.now += 0.5
        tick = report.expect(40, "units")
        tick()
    assert [(e.kind, e.total, e.unit, e.done) for e in events] == [
        ("start", 0, "", 0),
        ("progress", 40, "units", 0),
        ("done", 40, "units", 1),
    ]


def test_a_pass_that_fails_is_not_said_to_be_done_and_a_summary_passes_through() -> None:
    events: list[PassEvent] = []
    reporter = Reporter(events.append, clock=Clock())
    with pytest.raises(ValueError), reporter.running("graph"):
        raise ValueError("broken")
    reporter.summary("views", {"views": 3})
    assert [(e.kind, e.name) for e in events] == [("start", "graph"), ("summary", "views")]
    assert events[-1].result == {"views": 3}
