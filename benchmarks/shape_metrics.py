"""What ``benchmarks/shapes.py`` reports of its recorded questions: per question, each system's
document Acc@1 / Acc@5, HunkAll and line precision at each budget (:func:`metrics`); per
shape, the tables, the calibration of the confidence and the share of slices that say
"nothing relevant"."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

Row = dict[str, Any]
HUNK_BUDGETS = (2_000, 4_000, 8_000, 13_000)
PRECISION_BUDGETS = (4_000, 13_000)
SHAPES = ("issue", "howto", "knowledge", "copies", "workspace")


def read_results(work: Path) -> list[Row]:
    log = work / "results.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()] if log.exists() else []


def _covers(ranges: list[tuple[int, int]], first: int, last: int) -> bool:
    line = first
    for start, end in sorted(ranges):
        if start <= line <= end:
            line = end + 1
        if line > last:
            return True
    return line > last


def holds(slice_: dict[str, list[tuple[int, int]]], hunks: dict[str, list[list[int]]]) -> bool:
    return all(_covers(slice_.get(p, []), a, b) for p, spans in hunks.items() for a, b in spans)


def _gold_lines(hunks: dict[str, list[list[int]]]) -> dict[str, set[int]]:
    return {p: {n for a, b in spans for n in range(a, b + 1)} for p, spans in hunks.items()}


def metrics(result: Row) -> dict[str, dict[str, float]]:
    """Per system: acc@1, acc@5, hunk@B, precision@B, first_knowledge, first_right."""
    gold = set(result["gold"])
    hunks = result["hunks"]
    lines = _gold_lines(hunks)
    out: dict[str, dict[str, float]] = {}
    ranking = result["kbc"]["ranking"]
    documents = list(dict.fromkeys(item[0] for item in ranking if item[3] != "view"))
    kbc: dict[str, float] = {f"acc@{k}": float(gold <= set(documents[:k])) for k in (1, 5)}
    kbc["first_right"] = float(bool(documents) and documents[0] in gold)
    knowledge = [item for item in ranking if item[3] == "knowledge"]
    if result["shape"] == "knowledge":
        kbc["first_knowledge"] = float(bool(knowledge) and knowledge[0][0] in gold)
        kbc["first_section"] = float(
            bool(knowledge)
            and any(knowledge[0][1] <= b and knowledge[0][2] >= a for a, b in hunks.get(knowledge[0][0], []))
        )
    if result.get("copy_paths"):
        kbc["real_first"] = _before(documents, gold, set(result["copy_paths"]))
    if result["shape"] == "workspace":
        kbc["both"] = _both(gold, [item[0] for item in result["kbc"]["slices"]["8000"]])
    for budget, items in result["kbc"]["slices"].items():
        spans: dict[str, list[tuple[int, int]]] = {}
        for path, start, end, _ in items:
            spans.setdefault(path, []).append((start, end))
        kbc[f"hunk@{budget}"] = float(holds(spans, hunks))
        total = sum(end - start + 1 for _, start, end, _ in items)
        held = sum(len(lines.get(p, set()) & set(range(s, e + 1))) for p, s, e, _ in items)
        kbc[f"precision@{budget}"] = held / total if total else 0.0
    out["kbc"] = kbc
    base = result["bm25"]
    ranked = base["ranked"]
    bm25 = {f"acc@{k}": float(gold <= set(ranked[:k])) for k in (1, 5)}
    bm25["first_right"] = float(bool(ranked) and ranked[0] in gold)
    notes = [p for p in ranked if p.startswith("@knowledge/")]
    if result["shape"] == "knowledge":
        bm25["first_knowledge"] = float(bool(notes) and notes[0] in gold)
    for budget, taken in base["slices"].items():
        whole = {p: [(1, 10**9)] for p in taken}
        bm25[f"hunk@{budget}"] = float(holds(whole, hunks))
        total = sum(base["lines"].get(p, 0) for p in taken)
        held = sum(len(lines.get(p, set())) for p in taken)
        bm25[f"precision@{budget}"] = held / total if total else 0.0
    if result.get("copy_paths"):
        bm25["real_first"] = _before(ranked, gold, set(result["copy_paths"]))
    if result["shape"] == "workspace":
        bm25["both"] = _both(gold, base["slices"]["8000"])
    out["bm25"] = bm25
    return out


def _both(gold: set[str], packed: list[str]) -> float:
    """1 when the slice holds a gold file of every repository the answer spans."""
    return float({g.split(":", 1)[0] for g in gold} <= {p.split(":", 1)[0] for p in packed if p in gold})


def _before(documents: list[str], gold: set[str], copies: set[str]) -> float:
    """1 when a gold document is ranked before every copy of it (and is ranked at all)."""
    first_gold = next((i for i, d in enumerate(documents) if d in gold), None)
    first_copy = next((i for i, d in enumerate(documents) if d in copies), len(documents))
    return float(first_gold is not None and first_gold < first_copy)


def _pct(values: list[float]) -> str:
    return f"{100 * statistics.fmean(values):.1f}%" if values else "–"


def _head() -> list[str]:
    heads = ["Acc@1", "Acc@5"] + [f"HunkAll {b // 1000}k" for b in HUNK_BUDGETS]
    heads += [f"line precision {b // 1000}k" for b in PRECISION_BUDGETS]
    heads += ["note first among notes", "real definition before its copy", "every repository in 8k"]
    return [
        "| shape | n | repositories | system | " + " | ".join(heads) + " |",
        "| --- | ---: | ---: | --- |" + " ---: |" * len(heads),
    ]


def _row(shape: str, chosen: list[Row], title: str, got: list[dict[str, float]]) -> str:
    """One system's figures on one shape's questions."""
    cells = [_pct([g["acc@1"] for g in got]), _pct([g["acc@5"] for g in got])]
    cells += [_pct([g[f"hunk@{b}"] for g in got]) for b in HUNK_BUDGETS]
    cells += [_pct([g[f"precision@{b}"] for g in got]) for b in PRECISION_BUDGETS]
    cells.append(_pct([g["first_knowledge"] for g in got]) if shape == "knowledge" else "")
    cells.append(_pct([g["real_first"] for g in got if "real_first" in g]) if shape == "copies" else "")
    cells.append(_pct([g["both"] for g in got]) if shape == "workspace" else "")
    repos = len({r["repo"] for r in chosen})
    return f"| {shape} | {len(chosen)} | {repos} | {title} | " + " | ".join(cells) + " |"


def compare_table(runs: list[tuple[str, list[Row]]]) -> str:
    """Each shape's figures for each run (labelled), on the questions every run answered, with
    whole-file BM25 from the first run."""
    lines = _head()
    common = set.intersection(*({r["instance_id"] for r in rows} for _, rows in runs))
    for shape in SHAPES:
        systems: list[tuple[str, list[dict[str, float]]]] = []
        chosen: list[Row] = []
        for index, (label, rows) in enumerate(runs):
            chosen = sorted(
                (r for r in rows if r["shape"] == shape and r["instance_id"] in common),
                key=lambda r: r["instance_id"],
            )
            if not chosen:
                break
            scored = [metrics(r) for r in chosen]
            if index == 0:
                systems.append(("BM25 whole files", [m["bm25"] for m in scored]))
            systems.append((label, [m["kbc"] for m in scored]))
        if chosen:
            lines.extend(_row(shape, chosen, title, got) for title, got in systems)
    return "\n".join(lines)


def shape_table(results: list[Row]) -> str:
    lines = _head()
    for shape in SHAPES:
        chosen = [r for r in results if r["shape"] == shape]
        if not chosen:
            continue
        scored = [metrics(r) for r in chosen]
        for system, title in (("kbc", "kbc"), ("bm25", "BM25 whole files")):
            lines.append(_row(shape, chosen, title, [s[system] for s in scored]))
    return "\n".join(lines)


def calibration_table(results: list[Row], bins: int = 5) -> str:
    """Accuracy of the first document in bins of confidence, and the expected calibration error."""
    pairs = [
        (r["confidence"], metrics(r)["kbc"]["first_right"]) for r in results if r.get("confidence", -1) >= 0
    ]
    if not pairs:
        return "No confidence recorded."
    lines = [
        "| confidence | questions | mean confidence | first document right |",
        "| --- | ---: | ---: | ---: |",
    ]
    error = 0.0
    for index in range(bins):
        low, high = index / bins, (index + 1) / bins
        inside = [(c, a) for c, a in pairs if low <= c < high or (index == bins - 1 and c == 1.0)]
        if not inside:
            lines.append(f"| {low:.1f}–{high:.1f} | 0 | – | – |")
            continue
        mean_c = statistics.fmean(c for c, _ in inside)
        mean_a = statistics.fmean(a for _, a in inside)
        error += len(inside) / len(pairs) * abs(mean_c - mean_a)
        lines.append(f"| {low:.1f}–{high:.1f} | {len(inside)} | {mean_c:.2f} | {100 * mean_a:.1f}% |")
    lines.append("")
    lines.append(f"Expected calibration error: **{error:.3f}** over {len(pairs)} questions.")
    return "\n".join(lines)


def floor_table(results: list[Row]) -> str:
    """Per shape, the share of questions whose slice says "nothing relevant" by default (the
    relevance below its floor while the repository misses most of the task's words): for a
    question the repository answers, a slice lost; for a foreign one, a full budget of
    unrelated code not handed over."""
    shapes: dict[str, list[bool]] = {}
    for r in results:
        if r.get("confidence", -1) >= 0:
            shapes.setdefault(r["shape"], []).append(bool(r.get("low_confidence")))
    if not shapes:
        return "No floor recorded."
    lines = ["| shape | questions | nothing relevant |", "| --- | ---: | ---: |"]
    for shape in sorted(shapes):
        said = shapes[shape]
        lines.append(f"| {shape} | {len(said)} | {100 * sum(said) / len(said):.1f}% |")
    return "\n".join(lines)
