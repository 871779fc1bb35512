"""The tables of ``cold_build.py``, written from its rows: each corpus's size, wall time and peak
RSS; each pass's seconds and how they grow (log-log exponents against lines of Python and against
the pass's own input); the analysis and embedding passes against their floors; and the time to
the first slice and to full vectors against the lexical build."""

from __future__ import annotations

import math
from datetime import date
from typing import Any

PASSES = (
    "discover",
    "secrets",
    "analyze",
    "graph",
    "store facts",
    "views",
    "load embedder",
    "chunk",
    "lexical index",
    "embed",
    "vector store",
    "vector snapshot",
)
LINEAR = 1.15  # a growth exponent above this is reported as faster than linear
# What each pass's work is proportional to: lines of Python, lines of text, facts (symbols and
# edges) or units embedded. Exponents are taken against it as well as against lines of Python.
INPUT = {
    "discover": "files",
    "secrets": "lines",
    "analyze": "python_lines",
    "graph": "facts",
    "store facts": "facts",
    "views": "facts",
    "load embedder": "",
    "chunk": "lines",
    "lexical index": "lines",
    "embed": "embedded",
    "vector store": "embedded",
    "vector snapshot": "units",
}


def exponent(points: list[tuple[float, float]]) -> float | None:
    """The least-squares slope of log(seconds) on log(lines): 1 is linear growth."""
    usable = [(math.log(x), math.log(y)) for x, y in points if x > 0 and y > 0]
    if len(usable) < 2:
        return None
    mean_x = sum(x for x, _ in usable) / len(usable)
    mean_y = sum(y for _, y in usable) / len(usable)
    spread = sum((x - mean_x) ** 2 for x, _ in usable)
    return sum((x - mean_x) * (y - mean_y) for x, y in usable) / spread if spread else None


INPUT_NAMES = {
    "files": "text files",
    "python_lines": "lines of Python",
    "facts": "symbols + edges",
    "lines": "lines of text",
    "embedded": "units embedded",
    "units": "units",
}


def size_of(row: dict[str, Any], key: str) -> float:
    if key == "facts":
        return float(row.get("symbols", 0) + row.get("edges", 0))
    return float(row.get(key, 0))


def tables(rows: list[dict[str, Any]]) -> str:
    rows = sorted(rows, key=lambda r: r["python_lines"])
    out = [
        f"Cold `kbc build --no-llm`, default settings, packaged MiniLM int8, a new store and an empty "
        f"embedding cache each. Date: {date.today().isoformat()}.",
        "",
        "| corpus | text files | lines of text | lines of Python | units embedded | wall | peak RSS "
        "| retrieval |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        out.append(
            f"| {r['corpus']} ({r['origin']}) | {r['files']:,} | {r['lines']:,} "
            f"| {r['python_lines']:,} "
            f"| {r['embedded']:,} | {r['wall']:.1f} s | {r['peak_rss_mb'] / 1024:.2f} GB "
            f"| {r['retrieval']} |"
        )
    big = rows[-2:] if len(rows) >= 2 else []
    pair = " → ".join(r["corpus"] for r in big)
    out += [
        "",
        "Seconds per pass (peak RSS in MB reached by the pass's end), and how each pass's "
        "seconds grow with lines of Python: the exponent of a least-squares fit over the corpora "
        f"(log-log; 1.0 is linear; fixed costs pull small corpora's exponents below 1) and the "
        f"exponent from {pair or 'the two largest'} alone:",
        "",
        "| pass | " + " | ".join(r["corpus"] for r in rows) + f" | exponent, all | exponent, {pair} "
        f"| its input | exponent in its input, all | in its input, {pair} |",
        "| --- |" + " ---: |" * (len(rows) + 2) + " --- | ---: | ---: |",
    ]

    def growth(points: list[tuple[float, float]]) -> str:
        slope = exponent(points)
        if slope is None:
            return "–"
        return f"{slope:.2f}" + (" (faster than linear)" if slope > LINEAR else "")

    for name in PASSES:
        cells = []
        points = []
        for r in rows:
            timing = r["passes"].get(name)
            if timing is None:
                cells.append("–")
                continue
            cells.append(f"{timing['seconds']:.1f} s ({timing['peak_rss_mb']})")
            if timing["seconds"] > 0:
                points.append((float(r["python_lines"]), float(timing["seconds"])))
        tail = [p for p in points if p[0] in {float(r["python_lines"]) for r in big}]
        key = INPUT.get(name, "")
        own = [
            (float(size_of(r, key)), float(r["passes"][name]["seconds"]))
            for r in rows
            if key and name in r["passes"] and r["passes"][name]["seconds"] > 0 and size_of(r, key)
        ]
        own_tail = own[-2:] if len(own) == len(rows) else []
        out.append(
            f"| {name} | " + " | ".join(cells) + f" | {growth(points)} | {growth(tail)} "
            f"| {INPUT_NAMES.get(key, '–')} | {growth(own) if key else '–'} "
            f"| {growth(own_tail) if key else '–'} |"
        )
    walls = [(float(r["python_lines"]), float(r["wall"])) for r in rows]
    out.append(
        "| **whole build (wall)** | "
        + " | ".join(f"{r['wall']:.1f} s" for r in rows)
        + f" | {growth(walls)} | {growth(walls[-2:])} | | | |"
    )
    out += [
        "",
        "The analysis pass against its floor, libcst's parse alone in one process (an even "
        "sample of up to 200 of the corpus's Python files; the pass parses each file once, in a "
        "pool of 2 workers): a steady ratio means the pass grows as the parse does, with the code's "
        "density (µs per line), not faster:",
        "",
        "| corpus | parse alone, µs per line | analysis pass, µs per line (wall) | pass / parse |",
        "| --- | ---: | ---: | ---: |",
    ]
    for r in rows:
        analysed = 1e6 * r["passes"]["analyze"]["seconds"] / max(1, r["python_lines"])
        out.append(
            f"| {r['corpus']} | {r['parse_us_per_line']:.1f} | {analysed:.1f} "
            f"| {analysed / r['parse_us_per_line']:.2f}× |"
        )
    out += [
        "",
        "The embedding pass against its floor: the packaged model alone on an even sample of "
        "the same units, right after the build, in a process of its own:",
        "",
        "| corpus | units embedded | embed s | build units/s | model alone, units/s (sample) "
        "| floor / build |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        embed = r["passes"].get("embed", {}).get("seconds", 0.0)
        store = r["passes"].get("vector store", {}).get("seconds", 0.0)
        rate = r["embedded"] / (embed + store) if embed + store else 0.0
        ratio = r["floor_rate"] / rate if rate else 0.0
        out.append(
            f"| {r['corpus']} | {r['embedded']:,} | {embed:.1f} (+{store:.1f} store) | {rate:.1f} "
            f"| {r['floor_rate']:.1f} ({r['floor_units']}) | {ratio:.2f}× |"
        )
    return "\n".join(out + ["", *first_slices(rows)])


def first_slices(rows: list[dict[str, Any]]) -> list[str]:
    """The time to the first slice and to full vectors against the lexical build, and the
    redaction and facts passes of the lexical build against it and against the parse floor."""
    rows = [r for r in rows if "lexical" in r and "default" in r]
    out = [
        "Time to the first slice (build, then `kbc retrieve` of the README's task) and to full "
        "vectors, wall seconds from the build's start, against the lexical build "
        "(`-c index.embed_model=none`) of the same corpus in the same run; the default build "
        "leaves the vectors to a background process past `index.wait_units`, `--wait` embeds "
        "every one first. The redaction pass (`secrets`) as a share of the lexical build, and "
        "the facts passes (`secrets` + `analyze`, two workers) against libcst's parse alone:",
        "",
        "| corpus | units | lexical: first slice | default: first slice | × lexical "
        "| full vectors, background | full vectors, `--wait` | secrets / lexical build "
        "| facts / parse |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lexical, default = r["lexical"], r["default"]
        secrets = lexical["passes"].get("secrets", 0.0)
        facts_us = 1e6 * (secrets + lexical["passes"].get("analyze", 0.0)) / max(1, r["python_lines"])
        full = default["full_vectors"]
        ratio = default["first_slice"] / lexical["first_slice"]
        share = 100 * secrets / lexical["build"]
        out.append(
            f"| {r['corpus']} | {r['units']:,} | {lexical['first_slice']:.1f} s "
            f"| {default['first_slice']:.1f} s | {ratio:.2f} "
            f"| {'–' if full is None else f'{full:.1f} s'} | {r['wall']:.1f} s "
            f"| {secrets:.1f} s of {lexical['build']:.1f} s ({share:.0f} %) "
            f"| {facts_us / r['parse_us_per_line']:.2f}× |"
        )
    return out
