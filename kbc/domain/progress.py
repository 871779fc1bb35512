"""Who hears how long work goes on: a pass announces itself as it starts (its name and, when it
counts them, the items it will go through), says how far it has come at most every
``interval`` seconds, with the time left once it has seen enough to say (:func:`eta`), and
says when it is done; a stage's summary follows as soon as it is known.

Every pass reports, none prints: an interface (the CLI's lines on stderr, its JSON events)
hears the events through a :class:`Reporter`; without one nothing is said.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal, TypeVar

from kbc.domain.models import AnalysisResult

FileDone = Callable[[AnalysisResult], None]  # one file analyzed (or failed)
Tick = Callable[[], None]  # one item done
Counting = Callable[[int], Tick]  # given the number of items, what hears each one done
Say = Callable[[str], None]  # one line: a commit asked in `kbc eval --history`, a notice

EventKind = Literal["start", "progress", "done", "summary"]
T = TypeVar("T")

INTERVAL = 2.0  # seconds between two progress events of a pass, at the least
ETA_MIN_FRACTION = 0.1  # of its items a pass has done before it estimates the time left
ETA_MIN_SECONDS = 5.0  # and the seconds it has timed them, from its first item done


@dataclass(frozen=True, slots=True)
class PassEvent:
    """One thing a build says: a pass started, came so far or is done (``kind``); or a stage's
    summary (``summary``: ``name`` is the stage, ``result`` what it returned)."""

    kind: EventKind
    name: str  # the pass (discover, secrets, analyze, ...) or the stage summarized
    total: int = 0  # the items the pass goes through (0: it does not count them)
    unit: str = ""  # what they are: files, views, units
    done: int = 0  # of those, done so far
    seconds: float = 0.0  # since the pass started
    eta: float | None = None  # seconds left, once enough is seen to say (:func:`eta`)
    result: object = None  # a summary's: the stage's summary (an AnalyzeSummary, ...)


Hear = Callable[[PassEvent], None]


def counted(items: Iterable[T], tick: Tick | None) -> Iterator[T]:
    """``items``, ``tick`` heard as each one comes (a pool's results as they arrive)."""
    for item in items:
        if tick is not None:
            tick()
        yield item


def eta(done: int, total: int, seconds: float, first: tuple[int, float] = (0, 0.0)) -> float | None:
    """The seconds left to a pass that did ``done`` of its ``total`` items in ``seconds``, at
    the rate it has kept since ``first`` (the items done and the seconds gone when its first
    item came: a pool's start-up, a model's loading, is no rate); None until it has seen
    enough to say: a tenth of its items done, timed over five seconds. Either alone
    misleads: one item after a slow start says nothing of the rest, nor do a few seconds of
    a long pass."""
    first_done, first_seconds = first
    timed = seconds - first_seconds
    if not 0 < done < total or done < total * ETA_MIN_FRACTION or timed < ETA_MIN_SECONDS:
        return None
    return (total - done) * timed / (done - first_done) if done > first_done else None


class PassReport:
    """A pass under way: :meth:`advance` as its items are done, :meth:`skip` for those it
    need not work on (found in a cache), :meth:`expect` when it knows how many there are
    only once it has begun."""

    def __init__(self, reporter: Reporter, name: str, total: int, unit: str) -> None:
        self.name = name
        self.total = total
        self.unit = unit
        self.done = 0
        self.skipped = 0  # of ``done``: items there was no work for, left out of the rate
        self._reporter = reporter
        self._started = self._said = reporter.clock()
        self._first: tuple[int, float] | None = None  # work done and seconds at the first item

    def expect(self, total: int, unit: str) -> Tick:
        """The pass goes through ``total`` items (said at once); returns what hears each one."""
        self.total, self.unit = total, unit
        self.emit("progress")
        return self.advance

    def skip(self, items: int) -> None:
        """``items`` are done with no work (counted, not timed)."""
        self.done += items
        self.skipped += items

    def advance(self, items: int = 1) -> None:
        self.done += items
        now = self._reporter.clock()
        if self._first is None:
            self._first = (self.done - self.skipped, now - self._started)
        if now - self._said >= self._reporter.interval and not 0 < self.total <= self.done:
            self._said = now
            self.emit("progress", now)

    def emit(self, kind: EventKind, now: float | None = None) -> None:
        seconds = (self._reporter.clock() if now is None else now) - self._started
        left = None
        if kind == "progress" and self._first is not None:
            left = eta(self.done - self.skipped, self.total - self.skipped, seconds, self._first)
        self._reporter.hear(PassEvent(kind, self.name, self.total, self.unit, self.done, seconds, left))


class Reporter:
    """Hands out :class:`PassReport` s; ``hear`` gets every event (None: nothing is said),
    ``clock`` tells the seconds (monotonic), ``interval`` the least between two progress
    events of one pass."""

    def __init__(
        self,
        hear: Hear | None = None,
        *,
        interval: float = INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.hear: Hear = hear or (lambda _event: None)
        self.interval = interval
        self.clock = clock

    @contextmanager
    def running(self, name: str, total: int = 0, unit: str = "") -> Iterator[PassReport]:
        """The pass ``name`` while the block runs: started now, done when the block ends (a
        pass that raises is not done: its error says what happened)."""
        report = PassReport(self, name, total, unit)
        report.emit("start")
        yield report
        report.emit("done")

    def summary(self, name: str, result: object) -> None:
        """The stage ``name`` is over: ``result`` is what it found."""
        self.hear(PassEvent("summary", name, result=result))
