"""Reliability on real packages: `kbc build --no-llm`, lexical, over the sources of large,
popular packages from the registry; no build may end in a Python traceback.

    python benchmarks/real_packages.py [--work DIR] [--only sympy,django] [--timeout S]
        [--views] [--update-results]

Each package's source distribution (a pinned version) is fetched from PyPI's simple
index (PEP 691 JSON), checked against its sha256, unpacked under ``WORK/src`` and
built as a plain directory with ``KBC_EMBED_MODEL=none`` in a process of its own,
one at a time. Recorded per package (``WORK/results.jsonl``; an interrupted run
resumes): files, Python files, seconds, peak RSS of the build, exit code, the files
kbc could not analyze grouped by reason, and whether a Python traceback was printed.
With ``--views``: the views each build wrote, by kind, how many carry prose quoted from the
code, and how many sentences grounding removed (its own section of RESULTS.md).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

from corpora import FetchError, normalized, sdist
from results_file import update_section

# name, version: large and popular, libraries and applications, old and new styles
# (astropy 3.0 is of 2018, with deep chains of star imports).
PACKAGES = (
    ("sympy", "1.14.0"),
    ("astropy", "3.0.5"),
    ("astropy", "6.1.7"),
    ("django", "5.1.4"),
    ("scipy", "1.14.1"),
    ("pandas", "2.2.3"),
    ("matplotlib", "3.9.3"),
    ("sphinx", "8.1.3"),
    ("xarray", "2024.11.0"),
    ("scikit-learn", "1.5.2"),
    ("networkx", "3.4.2"),
    ("pylint", "3.3.2"),
    ("pytest", "8.3.4"),
    ("sqlalchemy", "2.0.36"),
    ("pydantic", "2.10.3"),
    ("transformers", "4.46.3"),
    ("numpy", "2.1.3"),
    ("setuptools", "75.6.0"),
    ("pip", "24.3.1"),
    ("twisted", "24.11.0"),
    ("tornado", "6.4.2"),
    ("mypy", "1.13.0"),
    ("ipython", "8.30.0"),
    ("dask", "2024.12.0"),
    ("statsmodels", "0.14.4"),
    ("pygments", "2.18.0"),
    ("docutils", "0.21.2"),
    ("nltk", "3.9.1"),
    ("black", "24.10.0"),
    ("celery", "5.4.0"),
    ("hypothesis", "6.122.1"),
)
FAILURE_REASON = re.compile(r"^(?:line \d+: )?([^:(0-9]+)")


def fetch(name: str, version: str, work: Path) -> Path:
    """The unpacked sources (one top folder), downloaded once and checked by sha256
    (:func:`corpora.sdist`); a package that cannot be fetched ends the run with the reason."""
    try:
        return sdist(name, version, work)
    except FetchError as exc:
        raise SystemExit(str(exc)) from exc


def build(tree: Path, timeout: float) -> dict[str, Any]:
    """``kbc build --no-llm`` in a child process: its summary, time, peak RSS (of the largest
    process: the build or one of its workers), exit code and stderr."""
    shutil.rmtree(tree / ".kbc", ignore_errors=True)
    env = {**os.environ, "KBC_EMBED_MODEL": "none"}
    env.pop("KBC_LLM_MODEL", None)
    command = [sys.executable, "-m", "kbc", "build", "--no-llm", str(tree), "--format", "json"]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        child = subprocess.Popen(command, stdout=out, stderr=err, env=env, text=True)
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - started > timeout:
                child.kill()
                _, status, usage = os.wait4(child.pid, 0)
                err.write(f"\ntimed out after {timeout:.0f} s")
                break
            time.sleep(0.2)
        seconds = time.perf_counter() - started
        child.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    row: dict[str, Any] = {
        "exit": code,
        "seconds": round(seconds, 1),
        "peak_rss_mb": round(usage.ru_maxrss / 1024),
        "traceback": "Traceback (most recent call last)" in stderr,
        "stderr_tail": stderr.strip().splitlines()[-3:],
    }
    if code == 0:
        summary = json.loads(stdout)
        analyze = summary["analyze"]
        views = summary["views"]
        row.update(
            files=analyze["files"],
            python_files=analyze["python_files"],
            failed=analyze["failed"],
            chunks=summary["index"]["chunks"],
            reasons=failure_reasons(Path(analyze["store"])),
            views=views["by_kind"],
            quoted=views["by_source"].get("docstring", 0),
            ungrounded=views["ungrounded"],
        )
    return row


def failure_reasons(store: Path) -> dict[str, int]:
    """The files kbc could not analyze, counted by the first words of their error."""
    reasons: Counter[str] = Counter()
    generation = (store / "CURRENT").read_text().strip()
    for failure in json.loads((store / generation / "problems.json").read_text())["failures"]:
        match = FAILURE_REASON.match(failure["error"])
        reasons[(match.group(1) if match else "other").strip()] += 1
    return dict(sorted(reasons.items()))


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| package | files | Python files | build s | peak RSS MB | exit "
        "| files not analyzed (by reason) | traceback |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for r in rows:
        reasons = ", ".join(f"{k} {v}" for k, v in r.get("reasons", {}).items()) or "none"
        traceback = "yes" if r["traceback"] else "no"
        lines.append(
            f"| {r['package']} | {r.get('files', '–')} | {r.get('python_files', '–')} "
            f"| {r['seconds']:.0f} | {r['peak_rss_mb']} | {r['exit']} | {reasons} | {traceback} |"
        )
    crashed = [r["package"] for r in rows if r["traceback"] or r["exit"] != 0]
    files = sum(r.get("files", 0) for r in rows)
    verdict = (
        f"{len(rows)} packages, {files:,} files: every build finished, no traceback."
        if not crashed
        else f"{len(rows)} packages: {len(crashed)} did not finish cleanly: " + ", ".join(crashed) + "."
    )
    return f"{verdict} Date: {date.today().isoformat()}.\n\n" + "\n".join(lines)


def views_table(rows: list[dict[str, Any]]) -> str:
    """Per package: views by kind, how many carry prose quoted from the code, and how many
    sentences grounding removed (none without an LLM: quoted prose names only what is there)."""
    kinds = sorted({k for r in rows for k in r.get("views", {})})
    lines = [
        "| package | " + " | ".join(kinds) + " | views | quoted prose | grounding removed |",
        "| --- |" + " ---: |" * (len(kinds) + 3),
    ]
    for r in rows:
        found = r.get("views", {})
        lines.append(
            f"| {r['package']} | "
            + " | ".join(str(found.get(k, 0)) for k in kinds)
            + f" | {sum(found.values())} | {r.get('quoted', 0)} | {r.get('ungrounded', 0)} |"
        )
    return (
        f"`kbc build --no-llm`, lexical, {len(rows)} packages. Date: {date.today().isoformat()}.\n\n"
        + "\n".join(lines)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/kbc-real-packages"))
    parser.add_argument("--only", default="", help="comma-separated package names")
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--update-results", action="store_true")
    parser.add_argument(
        "--views",
        action="store_true",
        help="report the views each build wrote (builds again what lacks them)",
    )
    args = parser.parse_args()
    only = {normalized(n) for n in args.only.split(",") if n}
    args.work.mkdir(parents=True, exist_ok=True)
    log = args.work / "results.jsonl"
    done = {r["package"]: r for r in map(json.loads, log.read_text().splitlines())} if log.exists() else {}
    rows = []
    for name, version in PACKAGES:
        if only and normalized(name) not in only:
            continue
        package = f"{name} {version}"
        if package not in done or (args.views and "views" not in done[package]):
            tree = fetch(name, version, args.work)
            row = {"package": package, **build(tree, args.timeout)}
            with log.open("a") as fh:
                fh.write(json.dumps(row, sort_keys=True) + "\n")
            done[package] = row
            print(
                f"{package}: exit {row['exit']} in {row['seconds']} s, files {row.get('files')}, "
                f"not analyzed {row.get('failed')}, traceback {row['traceback']}",
                flush=True,
            )
        rows.append(done[package])
    text = table(rows)
    print(text)
    if args.views:
        shown = views_table(rows)
        print(shown)
    if args.update_results and args.views:
        update_section(
            "real-packages-views",
            "Views on real packages",
            shown,
            f"python benchmarks/real_packages.py --views --only {args.only} --update-results",
        )
    elif args.update_results:
        update_section(
            "real-packages",
            "Reliability on real packages",
            text,
            "python benchmarks/real_packages.py --update-results",
        )


if __name__ == "__main__":
    main()
