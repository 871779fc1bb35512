"""The screen's side of ``secret_precision.py``: the scan each child process runs with the code
it measures first on its path. A tree's files are read as the credential sweep reads them and
screened (each line flagged listed with its detectors and its values masked); the planted
repository of ``tests/planted.py`` is written out and scanned the same way, each finding matched
with the planted values, and the recall is the planted values no file, redacted as a build
redacts it, still holds. kbc is imported inside the functions, so the code measured is the
child's."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

from timing import clock

REPO = Path(__file__).resolve().parents[1]
MAX_FILE_BYTES = 1_000_000  # kbc's default cap

Finding = dict[str, Any]


def masked(value: str) -> str:
    """The value shortened and masked: its first 4 characters, its length."""
    return f"{value[:4]}…({len(value)})" if len(value) > 6 else f"{value[:2]}…({len(value)})"


def _findings_of(path: str, text: str, language: str, where: str) -> list[tuple[int, str, str]]:
    """What the screen finds in one file (``where``: its path in the tree)."""
    import kbc.analyzers.secrets as screen

    if hasattr(screen, "file_findings"):
        return list(screen.file_findings(path, text, language, where=where))
    return list(screen._own_findings(path, text, language, text.split("\n")))  # the code before it


def _redacted(tree: Path, files: dict[str, str], languages: dict[str, str]) -> list[str]:
    """Each file redacted as a build redacts it: its own credentials and those of the others."""
    import inspect

    from kbc.analyzers.secrets import own_credentials, redact

    where = "where" in inspect.signature(redact).parameters  # the code before it has no where
    found: set[str] = set()
    for rel, text in files.items():
        extra = {"where": rel} if where else {}
        found |= own_credentials(str(tree / rel), text, languages[rel], **extra)[0]
    out = []
    for rel, text in files.items():
        extra = {"where": rel} if where else {}
        out.append(redact(str(tree / rel), text, languages[rel], also=found, **extra).text)
    return out


def scan_tree(package: str, version: str, tree: Path) -> tuple[list[Finding], int, float]:
    """Every line of ``tree`` the screen finds a credential on (its detectors and values masked
    listed), the files read and the seconds the detectors took."""
    from kbc.analyzers.discover import discover
    from kbc.analyzers.sweep import read_text

    inventory = discover(tree, max_file_bytes=MAX_FILE_BYTES)
    rows: dict[tuple[str, int], Finding] = {}
    seconds = 0.0
    for source in inventory.files:
        text = read_text(tree / source.path, source.language)
        if not text:
            continue
        with clock() as finding:
            found = _findings_of(str(tree / source.path), text, source.language, source.path)
        seconds += finding.wall
        lines = text.split("\n")
        for number, detector, value in sorted(found):
            line = lines[number - 1] if 0 < number <= len(lines) else ""
            row = rows.setdefault(
                (source.path, number),
                {
                    "package": package,
                    "version": version,
                    "path": source.path,
                    "line": number,
                    "detectors": [],
                    "values": [],
                    "context": line,
                },
            )
            row.setdefault("_found", []).append((detector, value))  # kept in memory only
            if detector not in row["detectors"]:
                row["detectors"] = sorted([*row["detectors"], detector])
            if masked(value) not in row["values"]:
                row["values"].append(masked(value))
                row["context"] = row["context"].replace(value, "⟨" + masked(value) + "⟩")
    for row in rows.values():
        row["context"] = row["context"].strip()[:200]
    ordered = sorted(rows.values(), key=lambda r: (r["path"], r["line"]))
    return ordered, len(inventory.files), seconds


def scan_planted(work: Path) -> tuple[list[Finding], int, float, dict[str, Any]]:
    """The planted repository (``tests/planted.py``) written to ``WORK/planted`` and scanned as a
    package is; each finding says whether its line holds a planted value (as written, or
    JSON-escaped in a notebook). Then the recall: the planted values no file redacted as a
    build redacts it (the repository-wide sweep included) still holds."""
    sys.path.insert(0, str(REPO / "tests"))
    from planted import planted

    from kbc.analyzers.discover import language_of

    files, values = planted()
    tree = work / "planted"
    shutil.rmtree(tree, ignore_errors=True)
    for rel, text in files.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)
    rows, count, seconds = scan_tree("planted", "tests/planted.py", tree)
    forms = {form for value in values.values() for form in (value, json.dumps(value)[1:-1])}
    for row in rows:
        lines = files[row["path"]].split("\n")
        row["planted"] = any(_holds(lines, row["line"], found, forms) for found in row["_found"])
    languages = {rel: language_of(rel, text.encode()[:4096]) for rel, text in files.items()}
    everything = "\n".join(_redacted(tree, files, languages))
    missed = sorted(name for name, value in values.items() if value in everything)
    recall = {"planted": len(values), "caught": len(values) - len(missed), "missed": missed}
    return rows, count, seconds, recall


def _holds(lines: list[str], number: int, found: tuple[str, str], forms: set[str]) -> bool:
    """A finding is of a planted credential: its value is one (a YAML block's, reported at its
    key's line), holds one or is part of one, or it is a private key block holding one."""
    detector, value = found
    if detector == "Private Key":
        block = lines[number - 1 :]
        end = next((i for i, line in enumerate(block) if "-----END" in line), len(block) - 1)
        return any(form in line for line in block[: end + 1] for form in forms)
    return any(form in value or (len(value) >= 8 and value in form) for form in forms)
