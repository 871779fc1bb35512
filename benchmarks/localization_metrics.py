"""The metrics of ``localization.py``, computed from its raw results when the tables are written:
each instance's Acc@k, the gold files and changed lines its slices hold at the reported budgets
and the tokens it takes to hold them all; the table over all instances and the one by
repository, for kbc and for the BM25 baseline alike. The budgets the slices are packed at are
here too."""

from __future__ import annotations

import statistics
from datetime import date
from typing import Any

BUDGETS = tuple(range(1_000, 27_001, 1_000))
REPORTED = (13_000, 27_000)
KS = (1, 5, 10)

Row = dict[str, Any]


def covers(ranges: list[list[Any]], path: str, hunks: list[list[int]]) -> bool:
    """Whether the union of the slice's ranges of ``path`` holds every line of ``hunks``."""
    spans = sorted((int(s), int(e)) for p, s, e in ranges if p == path)
    for first, last in hunks:
        line = first
        for start, end in spans:
            if start <= line <= end:
                line = end + 1
            if line > last:
                break
        if line <= last:
            return False
    return True


def holds_hunks(ranges: list[list[Any]], hunks: dict[str, list[list[int]]]) -> bool:
    return all(covers(ranges, path, spans) for path, spans in hunks.items())


def instance_metrics(system: Row, gold: set[str], hunks: dict[str, list[list[int]]]) -> dict[str, float]:
    ranked = system["ranked"]
    out: dict[str, float] = {f"acc@{k}": float(gold <= set(ranked[:k])) for k in KS}
    for budget in REPORTED:
        ranges = system["slices"][str(budget)]
        held = {p for p, _, _ in ranges} & gold
        out[f"all@{budget}"] = float(held == gold)
        out[f"avg@{budget}"] = len(held) / len(gold)
        out[f"hunk@{budget}"] = float(holds_hunks(ranges, hunks))
    out["to_gold"] = next(
        (float(b) for b in BUDGETS if holds_hunks(system["slices"][str(b)], hunks)), float("inf")
    )
    return out


LABELS = {
    "acc@1": "Acc@1",
    "acc@5": "Acc@5",
    "acc@10": "Acc@10",
    "all@13000": "13k All",
    "avg@13000": "13k Avg",
    "hunk@13000": "13k HunkAll",
    "all@27000": "27k All",
    "avg@27000": "27k Avg",
    "hunk@27000": "27k HunkAll",
}
SYSTEMS = (("kbc", "kbc retrieve (implementation)"), ("bm25", "BM25 whole files"))


def table(results: list[Row], hunks: dict[str, dict[str, list[list[int]]]]) -> str:
    n = len(results)
    lines = [
        "| system | " + " | ".join(LABELS.values()) + " | tokens to gold, median | never by 27k |",
        "| --- |" + " ---: |" * (len(LABELS) + 2),
    ]
    for system, title in SYSTEMS:
        measured = [instance_metrics(r[system], set(r["gold"]), hunks[r["instance_id"]]) for r in results]
        cells = [f"{100 * statistics.fmean(m[key] for m in measured):.1f}%" for key in LABELS]
        to_gold = statistics.median(m["to_gold"] for m in measured)
        never = sum(1 for m in measured if m["to_gold"] == float("inf"))
        median = "never" if to_gold == float("inf") else f"{to_gold / 1000:g}k"  # 4.5k, not 4k
        lines.append(f"| {title} | " + " | ".join(cells) + f" | {median} | {never} of {n} |")
    by_repo: dict[str, int] = {}
    for r in results:
        by_repo[r["repo"]] = by_repo.get(r["repo"], 0) + 1
    modes = sorted({r["retrieval"] for r in results})
    return "\n".join(
        [
            f"{n} instances ({', '.join(f'{k} {v}' for k, v in sorted(by_repo.items()))}); "
            f"kbc retrieval: {', '.join(modes)}. Date: {date.today().isoformat()}.",
            "",
            *lines,
        ]
    )


def per_repository(results: list[Row], hunks: dict[str, dict[str, list[list[int]]]]) -> str:
    lines = [
        "| repository | n | kbc Acc@1 | kbc Acc@5 | BM25 Acc@5 | kbc 13k HunkAll | BM25 13k HunkAll |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for repo in sorted({r["repo"] for r in results}):
        rows = [r for r in results if r["repo"] == repo]
        got = {
            s: [instance_metrics(r[s], set(r["gold"]), hunks[r["instance_id"]]) for r in rows]
            for s, _ in SYSTEMS
        }

        def pct(system: str, key: str, got: dict[str, list[dict[str, float]]] = got) -> str:
            return f"{100 * statistics.fmean(m[key] for m in got[system]):.1f}%"

        lines.append(
            f"| {repo} | {len(rows)} | {pct('kbc', 'acc@1')} | {pct('kbc', 'acc@5')} | "
            f"{pct('bm25', 'acc@5')} | {pct('kbc', 'hunk@13000')} | {pct('bm25', 'hunk@13000')} |"
        )
    return "\n".join(lines)
