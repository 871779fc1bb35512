"""Where a build's time and memory go: each pass's wall seconds and the peak resident memory
reached by its end; each pass measured is reported as it starts and ends."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from kbc.domain.progress import PassReport, Reporter


@dataclass(frozen=True, slots=True)
class PassTiming:
    name: str
    seconds: float
    peak_rss_mb: int  # the largest of this process and its finished workers, by the pass's end


def peak_rss_mb() -> int:
    """The peak resident memory so far of this process or of the largest child it waited for
    (a pool's workers count once the pool is shut down)."""
    try:
        import resource
    except ImportError:  # not on this platform (Windows): no figure rather than a wrong one
        return 0
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    unit = 1024 * 1024 if sys.platform == "darwin" else 1024  # macOS reports bytes, Linux KiB
    return round(max(own, children) / unit)


class Stopwatch:
    """Records the passes run under ``measure`` in the order they end; ``reporter`` hears
    each one start, advance and end."""

    def __init__(self, reporter: Reporter | None = None) -> None:
        self.passes: list[PassTiming] = []
        self.reporter = reporter or Reporter()

    @contextmanager
    def measure(self, name: str, total: int = 0, unit: str = "") -> Iterator[PassReport]:
        """Time the pass ``name``, going through ``total`` ``unit`` when it counts them."""
        started = time.perf_counter()
        try:
            with self.reporter.running(name, total, unit) as report:
                yield report
        finally:
            self.record(name, time.perf_counter() - started)

    def record(self, name: str, seconds: float) -> None:
        """A pass timed by its caller (the sum of several intervals, say)."""
        self.passes.append(PassTiming(name, round(seconds, 3), peak_rss_mb()))
