"""A setting's value chosen leaving each repository out, from runs of ``shapes.py`` already
recorded: for each repository, the value whose questions of every other repository hold the
most gold lines (HunkAll summed over 2k, 4k, 8k and 13k; ties to the first value given), and
what that choice changes on the repository's own questions against the first value.

    python -m benchmarks loro_choice VALUE=WORK[,WORK...] VALUE=WORK[,WORK...] ...

Each VALUE names the runs (``shapes.py run --work WORK``) made with it; only the questions every
value answered are read. Printed: how many folds chose each value, and the change, in questions,
at each budget, overall and per shape.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

from shape_metrics import HUNK_BUDGETS, metrics, read_results

KEYS = [f"hunk@{b}" for b in HUNK_BUDGETS]


def answers(works: list[Path]) -> dict[str, tuple[str, str, dict[str, float]]]:
    """Question id -> (repository, shape, kbc's metrics), over every run given."""
    return {
        r["instance_id"]: (r["repo"], r["shape"], metrics(r)["kbc"]) for w in works for r in read_results(w)
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="VALUE=WORK[,WORK...]")
    args = parser.parse_args(argv)
    by_value = {
        value: answers([Path(w) for w in works.split(",")])
        for value, works in (item.split("=", 1) for item in args.runs)
    }
    values = list(by_value)
    asked = sorted(set.intersection(*(set(found) for found in by_value.values())))
    if len(values) < 2 or not asked:
        print("give at least two values whose runs share questions", file=sys.stderr)
        return 2
    first = by_value[values[0]]
    repositories = sorted({first[q][0] for q in asked})

    def held(value: str, questions: list[str]) -> float:
        return sum(by_value[value][q][2][k] for q in questions for k in KEYS)

    chosen: Counter[str] = Counter()
    change: Counter[str] = Counter()
    shapes: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for repository in repositories:
        others = [q for q in asked if first[q][0] != repository]
        own = [q for q in asked if first[q][0] == repository]
        value = max(values, key=lambda v: (held(v, others), -values.index(v)))
        chosen[value] += 1
        for q in own:
            for k in KEYS:
                delta = by_value[value][q][2][k] - first[q][2][k]
                change[k] += delta
                shapes[first[q][1]][k] += delta
    print(f"{len(asked)} questions of {len(repositories)} repositories; folds choosing: {dict(chosen)}")
    print("change in questions against", values[0], ":", " / ".join(f"{change[k]:+.0f}" for k in KEYS))
    for shape, counted in sorted(shapes.items()):
        print(f"  {shape}: " + " / ".join(f"{counted[k]:+.0f}" for k in KEYS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
