"""The scoreboard of RESULTS.md, regenerated from its sections.

    python -m benchmarks scoreboard [--check]

Each section of ``benchmarks/RESULTS.md`` carries its headline rows itself, one per line, as
``<!-- scoreboard: | what | figure | target | section | -->`` under its heading. The scoreboard
is those rows in the order the sections come, between ``<!-- scoreboard:start -->`` and
``<!-- scoreboard:end -->``: rewritten here, never by hand. ``--check`` rewrites nothing and
fails when the scoreboard is not what its sections make.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

RESULTS = Path(__file__).with_name("RESULTS.md")
ROW = re.compile(r"^<!-- scoreboard: (\| .* \|) -->$", re.MULTILINE)
START, END = "<!-- scoreboard:start -->", "<!-- scoreboard:end -->"
HEADER = (
    "| What is measured | Today's figure | Target or baseline it is compared with | Section |\n"
    "| --- | --- | --- | --- |"
)


def regenerated(text: str) -> str:
    """``text`` (RESULTS.md) with its scoreboard made from its sections' rows."""
    if text.count(START) != 1 or text.count(END) != 1:
        raise SystemExit(f"RESULTS.md needs one {START} and one {END}")
    rows = "\n".join(ROW.findall(text))
    before, rest = text.split(START)
    _, after = rest.split(END)
    return f"{before}{START}\n{HEADER}\n{rows}\n{END}{after}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if the scoreboard is stale")
    args = parser.parse_args(argv)
    current = RESULTS.read_text()
    made = regenerated(current)
    if args.check:
        if made != current:
            stale = "the scoreboard of benchmarks/RESULTS.md is not its sections' rows"
            print(f"{stale}: run python -m benchmarks scoreboard")
            return 1
        print(f"the scoreboard holds its sections' {len(ROW.findall(current))} rows")
        return 0
    RESULTS.write_text(made)
    print(f"the scoreboard regenerated: {len(ROW.findall(made))} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
