"""Write one benchmark's section of RESULTS.md, between its own markers, with the line that
says when and on what its figures were taken (``timing.machine``), and, when the measurement
gives them, its scoreboard rows (kept just above its markers, each with the command that
produced it); the scoreboard and the README's table of commands are then regenerated from
every section's rows (``scoreboard``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from scoreboard import README, commands_table, regenerated
from timing import Load, machine

RESULTS = Path(__file__).with_name("RESULTS.md")


def row(what: str, figure: str, target: str, section: str) -> str:
    """One scoreboard row as a section keeps it."""
    cells = [cell.replace("|", "/").replace("\n", " ").strip() for cell in (what, figure, target, section)]
    return "<!-- scoreboard: | " + " | ".join(cells) + " | -->"


def written(
    current: str,
    key: str,
    title: str,
    text: str,
    command: str,
    load: Load | None = None,
    rows: Sequence[str] = (),
) -> str:
    """``current`` (RESULTS.md) with the section ``key`` written and the scoreboard regenerated."""
    start, end = f"<!-- {key}:start -->", f"<!-- {key}:end -->"
    block = f"{start}\n{text}\n\n{machine(load)}\n\nCommand: `{command}`\n{end}"
    if start in current:
        current = re.sub(
            re.escape(start) + ".*?" + re.escape(end), lambda _m: block, current, flags=re.DOTALL
        )
    else:
        current = current.rstrip("\n") + f"\n\n## {title}\n\n{block}\n"
    if rows:
        kept = re.compile(
            r"(?:^<!-- scoreboard: \| .* \| -->\n)*\n?(?=" + re.escape(start) + ")", re.MULTILINE
        )
        by = " <!-- by: " + " ".join(command.split()).replace("-->", "- ->") + " -->"
        lines = "\n".join(r if "<!-- by: " in r else r + by for r in rows) + "\n\n"
        current = kept.sub(
            lambda m: lines if m.group().startswith("<!--") else "\n" + lines, current, count=1
        )
    return regenerated(current)


def update_section(
    key: str, title: str, text: str, command: str, load: Load | None = None, rows: Sequence[str] = ()
) -> None:
    current = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    made = written(current, key, title, text, command, load, rows)
    RESULTS.write_text(made)
    if rows:  # the README's table of which command produced each row
        README.write_text(commands_table(made, README.read_text()))


def report(
    text: str,
    update: bool,
    key: str,
    title: str,
    command: str,
    load: Load | None = None,
    rows: Sequence[str] = (),
) -> None:
    """Print a benchmark's ``text``; with ``update``, write it as its section too."""
    print(text)
    if update:
        update_section(key, title, text, command, load, rows)
