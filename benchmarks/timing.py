"""Timing, as every measurement takes it: one clock, interleaved rounds with the baseline in
the same run, and the machine's load written beside the figures.

This machine is shared and noisy, so a figure alone says little: a measurement times its
variants (kbc, the floor it is compared with, another revision's code) in rounds, every
variant once per round and in a rotated order, and reports ratios of figures taken in the same
rounds. :func:`clock` reads wall seconds and CPU seconds (this process's and its finished
children's, so a variant that runs ``kbc`` as a subprocess is charged for it); :class:`Load`
reads the load average while the rounds run, and :func:`machine` says what the figures were
taken on. ``results_file.report`` writes that line into every section it writes.
"""

from __future__ import annotations

import os
import platform
import resource
import statistics
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date


@dataclass(slots=True)
class Sample:
    """One timed run: wall seconds, and CPU seconds of this process and its waited-for children."""

    wall: float = 0.0
    cpu: float = 0.0


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@contextmanager
def clock() -> Iterator[Sample]:
    """Time the ``with`` block; the sample is filled in when the block ends (also on error)."""
    sample = Sample()
    started, used = time.perf_counter(), _cpu()
    try:
        yield sample
    finally:
        sample.wall = time.perf_counter() - started
        sample.cpu = _cpu() - used


def timed(run: Callable[[], object]) -> Sample:
    """One run of ``run``, timed."""
    with clock() as sample:
        run()
    return sample


@dataclass(slots=True)
class Load:
    """The 1-minute load average, read before the rounds, after each and at the end."""

    readings: list[float] = field(default_factory=list)

    def read(self) -> None:
        self.readings.append(os.getloadavg()[0])

    def describe(self) -> str:
        if not self.readings:
            return "load not read"
        low, high = min(self.readings), max(self.readings)
        return f"load average {low:.2f}–{high:.2f} over {len(self.readings)} readings"


def interleaved(
    variants: Mapping[str, Callable[[], object]], rounds: int, load: Load | None = None
) -> dict[str, list[Sample]]:
    """``rounds`` rounds of every variant, each round in an order rotated by one from the last
    (so no variant always runs first, on a cold cache, or last, on a tired machine)."""
    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    names = list(variants)
    samples: dict[str, list[Sample]] = {name: [] for name in names}
    if load is not None:
        load.read()
    for number in range(rounds):
        shift = number % len(names) if names else 0
        for name in names[shift:] + names[:shift]:
            samples[name].append(timed(variants[name]))
        if load is not None:
            load.read()
    return samples


def best(samples: list[Sample], cpu: bool = False) -> float:
    """The fastest run's seconds: noise only ever adds time."""
    return min(s.cpu if cpu else s.wall for s in samples)


def median(samples: list[Sample], cpu: bool = False) -> float:
    return statistics.median(s.cpu if cpu else s.wall for s in samples)


def spread(samples: list[Sample]) -> float:
    """(slowest − fastest) / mean wall time: how noisy the rounds were."""
    walls = [s.wall for s in samples]
    mean = statistics.fmean(walls)
    return (max(walls) - min(walls)) / mean if mean else 0.0


def ratios(
    samples: Mapping[str, list[Sample]], baseline: str, pick: Callable[[list[Sample]], float] = best
) -> dict[str, float]:
    """Each variant's figure over the baseline's, both taken in the same rounds."""
    floor = pick(samples[baseline])
    return {name: pick(runs) / floor if floor else float("inf") for name, runs in samples.items()}


def machine(load: Load | None = None) -> str:
    """What the figures were taken on: date, cores, Python and, when read, the load."""
    reading = load.describe() if load is not None else f"load average {os.getloadavg()[0]:.2f} when written"
    return (
        f"Taken {date.today().isoformat()} on {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {reading}."
    )
