"""The table of ``benchmarks/views_corpus.py``: its columns, each package's cells, and the
table as Markdown (under a line of totals) or tab-separated.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from views_checks import failed


def _kinds(counts: dict[str, int], skip: str = "") -> str:
    return ", ".join(f"{k} {n}" for k, n in counts.items() if k != skip) or "–"


COLUMNS = (
    "package",
    "shape",
    "build s",
    "Python files",
    "components (module views / groups)",
    "dependencies",
    "workflows",
    "from public API",
    "from elsewhere (by kind)",
    "entry points",
    "main_guard",
    "examples",
    "unresolved citations / cited",
    "empty fields / fields",
    "prose llm / docstring / none",
    "business rules",
    "public modules with a view of their own",
    "sub-commands reaching their work",
    "checks failed",
    "status",
)


def cells(row: dict[str, Any]) -> list[str]:
    if row["status"] != "ok":
        error = row.get("error", "").replace("|", "\\|")
        return [row["package"], row["shape"], *["–"] * (len(COLUMNS) - 3), f"{row['status']}: {error}"]
    prose = row["prose"]
    return [
        row["package"],
        row["shape"],
        f"{row['build_seconds']:.0f}",
        str(row["python_files"]),
        f"{row['components']} / {row['module_groups']}",
        str(row["dependencies"]),
        str(row["workflows"]),
        str(row["workflows_public_api"]),
        f"{row['workflows_other']}"
        + (f" ({_kinds(row['workflow_starts'], 'public_api')})" if row["workflows_other"] else ""),
        str(row["entry_points"]),
        str(row["entry_points_main_guard"]),
        str(row["examples"]),
        f"{row['unresolved_citations']} / {row['citations']}",
        f"{row['empty_fields']} / {row['interpretation_fields']}",
        f"{prose['llm']} / {prose['docstring']} / {prose['none']}",
        str(row["business_rules"]),
        f"{row['checks']['public_modules_alone']} / {row['checks']['public_modules']}",
        row["checks"].get("subcommands_reached", "–"),
        ", ".join(failed(row["checks"])) or "none",
        "ok",
    ]


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "| --- | --- |" + " ---: |" * (len(COLUMNS) - 3) + " --- |"]
    lines += ["| " + " | ".join(cells(row)) + " |" for row in rows]
    ok = [r for r in rows if r["status"] == "ok"]
    seconds = sum(r["build_seconds"] for r in ok)
    fields = sum(r["interpretation_fields"] for r in ok)
    empty = sum(r["empty_fields"] for r in ok)
    lost = sum(r["unresolved_citations"] for r in ok)
    verdict = (
        f"{len(rows)} packages, {len(ok)} built ({seconds:.0f} build s); "
        f"{lost} unresolved of {sum(r['citations'] for r in ok)} citations; "
        f"{empty} of {fields} interpretation fields empty; "
        f"{sum(not failed(r['checks']) for r in ok)} pass every check. `kbc build --no-llm`, "
        f"lexical. Date: {date.today().isoformat()}."
    )
    return verdict + "\n\n" + "\n".join(lines)


def tab_separated(rows: list[dict[str, Any]]) -> str:
    return "\n".join("\t".join(line) for line in [list(COLUMNS), *map(cells, rows)])
