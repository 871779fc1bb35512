"""Write one benchmark's section of RESULTS.md, between its own markers."""

from __future__ import annotations

import re
from pathlib import Path

RESULTS = Path(__file__).with_name("RESULTS.md")


def update_section(key: str, title: str, text: str, command: str) -> None:
    start, end = f"<!-- {key}:start -->", f"<!-- {key}:end -->"
    block = f"{start}\n{text}\n\nCommand: `{command}`\n{end}"
    current = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    if start in current:
        current = re.sub(
            re.escape(start) + ".*?" + re.escape(end), lambda _m: block, current, flags=re.DOTALL
        )
    else:
        current = current.rstrip("\n") + f"\n\n## {title}\n\n{block}\n"
    RESULTS.write_text(current)


def report(text: str, update: bool, key: str, title: str, command: str) -> None:
    """Print a benchmark's ``text``; with ``update``, write it as its section too."""
    print(text)
    if update:
        update_section(key, title, text, command)
