"""The scoreboard of RESULTS.md, regenerated from its sections.

    python -m benchmarks scoreboard [--check]

Each section of ``benchmarks/RESULTS.md`` carries its headline rows itself, one per line, as
``<!-- scoreboard: | what | figure | target | section | --> <!-- by: COMMAND -->`` under its
heading, COMMAND being the run of a listed measurement that produced the figure. The scoreboard
is those rows in the order the sections come, between ``<!-- scoreboard:start -->`` and
``<!-- scoreboard:end -->`` of RESULTS.md, and the table of which command produced each row is
between ``<!-- commands:start -->`` and ``<!-- commands:end -->`` of ``benchmarks/README.md``:
both rewritten here, never by hand. ``--check`` rewrites nothing and fails when either is not
what the sections make, or when a row names no command of a listed measurement.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
README = HERE / "README.md"
ROW = re.compile(r"^<!-- scoreboard: (\| .* \|) -->(?: <!-- by: (.*?) -->)?$", re.MULTILINE)
START, END = "<!-- scoreboard:start -->", "<!-- scoreboard:end -->"
COMMANDS_START, COMMANDS_END = "<!-- commands:start -->", "<!-- commands:end -->"
HEADER = (
    "| What is measured | Today's figure | Target or baseline it is compared with | Section |\n"
    "| --- | --- | --- | --- |"
)
COMMANDS_HEADER = "| Scoreboard row | Section | Produced by |\n| --- | --- | --- |"
# A command runs a measurement: `python -m benchmarks NAME ...` or `python benchmarks/NAME.py ...`
# (NAME listed by ``--list``), or kbc's own evaluation (`kbc eval ...`).
MEASUREMENT = re.compile(r"python (?:-m benchmarks (\w+)|benchmarks/(\w+)\.py)\b|\bkbc (eval)\b")


@dataclass(frozen=True, slots=True)
class Row:
    cells: str  # "| what | figure | target | section |"
    command: str  # "" when the row names none

    @property
    def what(self) -> str:
        return self.cells.strip("| ").split(" | ")[0]

    @property
    def section(self) -> str:
        return self.cells.strip("| ").split(" | ")[-1]


def rows_of(text: str) -> list[Row]:
    return [Row(cells, command or "") for cells, command in ROW.findall(text)]


def _between(text: str, start: str, end: str, body: str, name: str) -> str:
    if text.count(start) != 1 or text.count(end) != 1:
        raise SystemExit(f"{name} needs one {start} and one {end}")
    before, rest = text.split(start)
    _, after = rest.split(end)
    return f"{before}{start}\n{body}\n{end}{after}"


def regenerated(text: str) -> str:
    """``text`` (RESULTS.md) with its scoreboard made from its sections' rows."""
    rows = "\n".join(row.cells for row in rows_of(text))
    return _between(text, START, END, f"{HEADER}\n{rows}", "RESULTS.md")


def commands_table(results: str, readme: str) -> str:
    """``readme`` (benchmarks/README.md) with the table of each row's command made from ``results``."""
    lines = [
        f"| {row.what} | {row.section} | `{row.command}` |"
        if row.command
        else f"| {row.what} | {row.section} | |"
        for row in rows_of(results)
    ]
    return _between(readme, COMMANDS_START, COMMANDS_END, "\n".join([COMMANDS_HEADER, *lines]), "README.md")


def unproduced(results: str, measurements: set[str]) -> list[str]:
    """The rows whose command is missing or runs no listed measurement."""
    wrong = []
    for row in rows_of(results):
        found = MEASUREMENT.search(row.command)
        if not found or (found.group(1) or found.group(2) or found.group(3)) not in {*measurements, "eval"}:
            wrong.append(f"{row.what} ({row.section}): {row.command or 'no command'}")
    return wrong


def listed_measurements() -> set[str]:
    """What ``python -m benchmarks --list`` names (read from the package's ``__main__.py``)."""
    spec = importlib.util.spec_from_file_location("benchmarks_listing", HERE / "__main__.py")
    assert spec is not None and spec.loader is not None
    listing = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(listing)
    return set(listing.measurements())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if the scoreboard is stale")
    args = parser.parse_args(argv)
    results, readme = RESULTS.read_text(), README.read_text()
    made, listed = regenerated(results), commands_table(results, readme)
    count = len(rows_of(results))
    wrong = unproduced(results, listed_measurements())
    if wrong:
        print("rows that name no command of a listed measurement:\n  " + "\n  ".join(wrong))
    if args.check:
        if made != results or listed != readme:
            print("the scoreboard of benchmarks/RESULTS.md or the commands of benchmarks/README.md are not")
            print("their sections' rows: run python -m benchmarks scoreboard")
            return 1
        if wrong:
            return 1
        print(f"the scoreboard holds its sections' {count} rows, each with the command that produced it")
        return 0
    RESULTS.write_text(made)
    README.write_text(listed)
    print(f"the scoreboard regenerated: {count} rows")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
