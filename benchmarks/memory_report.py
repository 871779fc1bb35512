"""The Markdown tables of ``benchmarks/memory.py``: build and refresh, serve, the vector
snapshot and the workspace, one row per version of kbc measured.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from memory_peaks import TICK


def markdown(rows: dict[str, dict[str, Any]], requests: int) -> str:
    labels = list(rows)
    out = [
        f"Peak RSS, MiB, read from `/proc` every {int(TICK * 1000)} ms; each version of kbc on the "
        f"same inputs in the same run. Date: {date.today().isoformat()}.",
        "",
    ]
    if any("build" in r for r in rows.values()):
        out += [
            "| version | sympy build `--wait`: wall | largest process | process tree "
            "| refresh, one file: wall | largest process | process tree | store (chunk ids and texts) |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
        ]
        for label in labels:
            r = rows[label]
            if "build" in r:
                b, f = r["build"]["build"], r["build"]["refresh"]
                out.append(
                    f"| {label} | {b['wall']} s | {b['one_mb']} | {b['tree_mb']} | {f['wall']} s | "
                    f"{f['one_mb']} | {f['tree_mb']} | `{r['build']['store']}` |"
                )
        out.append("")
    if any("serve" in r for r in rows.values()):
        out += [
            f"| version | served | retrieval | answering | after 1 retrieve | after {requests} more | peak |",
            "| --- | --- | --- | ---: | ---: | ---: | ---: |",
        ]
        for label in labels:
            for served, s in rows[label].get("serve", {}).items():
                repo, way = served.split(" ")
                out.append(
                    f"| {label} | {repo} | {way} | {s['started']} | {s['first']} | {s['after']} "
                    f"| {s['peak']} |"
                )
        out.append("")
    if any("snapshot" in r for r in rows.values()):
        out += [
            "| version | store | units | vector snapshot written: RSS growth, MiB | seconds "
            "| matrix (sha256) |",
            "| --- | --- | ---: | ---: | ---: | --- |",
        ]
        for label in labels:
            for name, v in rows[label].get("snapshot", {}).items():
                out.append(
                    f"| {label} | {name} | {v['units']} | {v['growth']} | {v['seconds']} | `{v['matrix']}` |"
                )
        out.append("")
    if any("workspace" in r for r in rows.values()):
        out += [
            f"| version | workspace of 20, lexical | started | one retrieve in each "
            f"| after {requests} across all | peak |",
            "| --- | --- | ---: | ---: | ---: | ---: |",
        ]
        for label in labels:
            if "workspace" in rows[label]:
                w = rows[label]["workspace"]
                out.append(f"| {label} | | {w['started']} | {w['each']} | {w['after']} | {w['peak']} |")
    return "\n".join(out).rstrip()
