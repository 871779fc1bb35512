"""How far a command's passes have come, on stderr, as a person or a program reads it; stdout
keeps what the command answers (its summaries, or its one JSON document).

Text: a line as each pass starts (its name and, when it counts them, the items it goes
through), how far it has come at most every two seconds, with the time left once the pass
has seen enough to say (a tenth of its items and five seconds, :func:`kbc.domain.progress.eta`),
and a line when it is done. On a terminal a pass's line is rewritten in place (at most four
times a second) until it is done. A stage's summary is printed on stdout as soon as the stage
ends. JSON: one event per line, ``kind`` (start, progress, done, summary) and ``pass``.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass
from typing import Any

import click

from kbc.cli.common import duration
from kbc.domain.progress import INTERVAL, PassEvent, Reporter

TERMINAL_INTERVAL = 0.25  # seconds between two rewrites of a pass's line on a terminal
CLEAR_LINE = "\r\x1b[K"


def describe(event: PassEvent) -> str:
    """One event of a pass as a line: ``secrets: 474 files…``, ``secrets: 210/474 files · 2 s``,
    ``secrets: 420/474 files · 6 s · about 1 s left``, ``secrets: 474 files in 6.4 s``."""
    counted = _count(event.total, event.unit) if event.total else ""
    if event.kind == "start" or (event.kind == "progress" and event.total and not event.done):
        return f"{event.name}: {counted}…" if counted else f"{event.name}…"
    if event.kind == "progress":
        so_far = f"{event.done}/{counted}" if event.total else _count(event.done, event.unit)
        left = "" if event.eta is None else f" · about {duration(event.eta)} left"
        return f"{event.name}: {so_far} · {event.seconds:.0f} s{left}"
    did = _count(event.done, event.unit) if event.total else "done"
    return f"{event.name}: {did} in {event.seconds:.1f} s"


def _count(items: int, unit: str) -> str:
    """``3 files``, ``1 file``."""
    return f"{items} {unit[:-1] if items == 1 and unit.endswith('s') else unit}".rstrip()


class Lines:
    """The text form: on a terminal, a pass's line rewritten in place until it is done;
    elsewhere a plain line per event. A summary goes to stdout as ``render`` writes it
    (nothing when it gives an empty string)."""

    def __init__(self, render: Callable[[PassEvent], str], *, terminal: bool) -> None:
        self.render = render
        self.terminal = terminal
        self.open = False  # a pass's line on the terminal, not ended yet

    def __call__(self, event: PassEvent) -> None:
        if event.kind == "summary":
            self.close()
            text = self.render(event)
            if text:
                click.echo(text)
            return
        line = describe(event)
        if not self.terminal:
            click.echo(line, err=True)
            return
        width = max(20, shutil.get_terminal_size().columns - 1)
        click.echo(CLEAR_LINE + line[:width], err=True, nl=event.kind == "done")
        self.open = event.kind != "done"

    def close(self) -> None:
        """End the line a pass left open (it was stopped, or a summary follows)."""
        if self.open:
            click.echo(err=True)
            self.open = False


def event_data(event: PassEvent) -> dict[str, Any]:
    """An event as JSON: ``kind`` and ``pass``; a pass's ``total``, ``unit``, ``done`` and
    ``seconds`` (and ``eta`` while it runs, null until it is known); a summary's ``summary``."""
    data: dict[str, Any] = {"kind": event.kind, "pass": event.name}
    if event.kind == "summary":
        result = event.result
        data["summary"] = asdict(result) if is_dataclass(result) and not isinstance(result, type) else result
        return data
    data.update(total=event.total, unit=event.unit, done=event.done, seconds=round(event.seconds, 2))
    if event.kind == "progress":
        data["eta"] = None if event.eta is None else round(event.eta, 1)
    return data


def json_line(event: PassEvent) -> None:
    click.echo(json.dumps(event_data(event), sort_keys=True), err=True)


@contextmanager
def progress_on_stderr(fmt: str, render: Callable[[PassEvent], str]) -> Iterator[Reporter]:
    """What a command's passes report to, in its ``fmt`` (``text`` or ``json``); ``render``
    writes a stage's summary in text (JSON events carry it whole)."""
    if fmt == "json":
        yield Reporter(json_line)
        return
    terminal = sys.stderr.isatty()
    lines = Lines(render, terminal=terminal)
    try:
        yield Reporter(lines, interval=TERMINAL_INTERVAL if terminal else INTERVAL)
    finally:
        lines.close()
