"""Every measurement of kbc, by name.

    python -m benchmarks --list
    python -m benchmarks NAME [ARGS ...]    # runs benchmarks/NAME.py with ARGS
    python -m benchmarks scoreboard [--check]

A measurement is a script of this folder that runs as a program (a main guard) and says in its
docstring what it measures (its first paragraph is what ``--list`` prints): the measurements
themselves, the builders of their question sets and corpora, and the fits whose figures they
report. Modules the scripts only import are not listed.
"""

from __future__ import annotations

import ast
import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MAIN_GUARD = 'if __name__ == "__main__":'


def measurements() -> dict[str, str]:
    """Each measurement's name and the first sentence of what it measures."""
    found: dict[str, str] = {}
    for script in sorted(HERE.glob("*.py")):
        text = script.read_text()
        if script.stem == "__main__" or MAIN_GUARD not in text:
            continue
        doc = ast.get_docstring(ast.parse(text), clean=True) or ""
        found[script.stem] = " ".join(doc.split("\n\n")[0].split())
    return found


def main() -> int:
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    known = measurements()
    if args[0] == "--list":
        width = max(map(len, known))
        for name, what in known.items():
            print(f"{name:<{width}}  {what}")
        return 0
    name = args[0]
    if name not in known:
        print(f"no measurement named {name!r}; `python -m benchmarks --list` names them", file=sys.stderr)
        return 2
    sys.path.insert(0, str(HERE))  # the scripts import each other's modules by their names
    sys.argv = [str(HERE / f"{name}.py"), *args[1:]]
    runpy.run_path(sys.argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
