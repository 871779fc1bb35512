"""A branch switch is a refresh: two commits about a year apart, switched to and back, each
refresh against a cold build of the same commit, in one run.

    python benchmarks/branch_switch.py [--mirror DIR] [--a COMMIT] [--b COMMIT]
        [--baseline-src DIR] [--work DIR] [--vectors] [--update-results]

In one work tree: a cold ``kbc build --wait`` at A, then ``git checkout B`` and ``kbc refresh``,
back to A and ``kbc refresh``, and to B again and ``kbc refresh``. A and B are also
cold-built in fresh clones (the ratio's denominator is the cold build of the same commit). With
``--baseline-src`` (a checkout of kbc's code to compare with), the same switches are run with
that code in a work tree of its own, in the same run. Each command is a separate process
(``python -m kbc``); times are wall seconds of the whole command. Without ``--vectors`` the
builds are lexical (``KBC_EMBED_MODEL=none``); no LLM either way.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from results_file import report
from timing import Sample, clock

A = "8164c3a79c3d838e639a72a42ec552c0567ccb8b"  # astropy main, 2024-06-01
B = "c8ef6b1bd29ec2436ef6595e24c7988c467c0ac7"  # astropy main, 2025-05-30
HERE = Path(__file__).resolve().parent.parent


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def clone(mirror: Path, commit: str, target: Path) -> Path:
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(mirror), str(target)], check=True)
    git(target, "checkout", "-q", "-B", "bench", commit)
    return target


def kbc(source: Path, root: Path, vectors: bool, *args: str) -> tuple[Sample, dict[str, Any]]:
    """Run ``python -m kbc ARGS`` with the code at ``source``; (its wall and CPU seconds, its
    worker processes included, and its JSON)."""
    env = {**os.environ, "PYTHONPATH": str(source)}
    if not vectors:
        env["KBC_EMBED_MODEL"] = "none"
    with clock() as sample:
        done = subprocess.run(
            [sys.executable, "-m", "kbc", *args], cwd=root, env=env, capture_output=True, text=True
        )
    if done.returncode != 0:
        sys.exit(f"kbc {' '.join(args)} failed in {root}:\n{done.stderr[-4000:]}")
    return sample, json.loads(done.stdout)


def cold(source: Path, root: Path, vectors: bool) -> tuple[Sample, dict[str, Any]]:
    return kbc(source, root, vectors, "build", "--no-llm", "--wait", "--format", "json", ".")


def switch(source: Path, root: Path, commit: str, vectors: bool) -> tuple[Sample, dict[str, Any]]:
    """Check ``commit`` out and refresh (the checkout's own time is not counted)."""
    git(root, "checkout", "-q", "-B", "bench", commit)
    return kbc(source, root, vectors, "refresh", "--no-llm", "--ci", ".")


def row(label: str, run: Sample, cold_run: Sample, data: dict[str, Any]) -> str:
    build = data.get("build") or {}
    cached = build.get("files_chunked_from_cache")
    return (
        f"| {label} | {data.get('path', '')} | {run.wall:.1f} s | {run.wall / cold_run.wall:.1%} | "
        f"{run.cpu:.1f} s | {run.cpu / cold_run.cpu:.1%} | "
        f"{build.get('parsed', '—')} ({build.get('from_cache', '—')}) | "
        f"{build.get('files_rechunked', '—')} ({'—' if cached is None else cached}) | "
        f"{build.get('embedded', '—')} |"
    )


def switches(
    source: Path, root: Path, a: str, b: str, vectors: bool
) -> list[tuple[str, Sample, dict[str, Any]]]:
    built, summary = cold(source, root, vectors)
    runs = [("cold build at A", built, {"path": "cold", "build": _cold_counts(summary)})]
    for label, commit in (("A → B", b), ("B → A (back)", a), ("A → B (again)", b)):
        sample, data = switch(source, root, commit, vectors)
        runs.append((label, sample, data))
        print(f"{source}: {label} {sample.wall:.1f} s ({data.get('path')})", flush=True)
    return runs


def _cold_counts(summary: dict[str, Any]) -> dict[str, Any]:
    analyze, index = summary.get("analyze", {}), summary.get("index", {})
    return {
        "parsed": analyze.get("parsed", "—"),
        "from_cache": analyze.get("cached", "—"),
        "files_rechunked": index.get("changed_files", "—"),
        "embedded": index.get("embedded", "—"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror/astropy+astropy/repo"))
    parser.add_argument("--a", default=A)
    parser.add_argument("--b", default=B)
    parser.add_argument("--baseline-src", type=Path, help="kbc's code to compare with, run in the same way")
    parser.add_argument("--work", type=Path, help="folder for the clones (default: a temporary one)")
    parser.add_argument("--vectors", action="store_true", help="embed with the packaged model (--wait)")
    parser.add_argument("--update-results", action="store_true")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="kbc-switch-"))
    work.mkdir(parents=True, exist_ok=True)
    a, b = git(args.mirror, "rev-parse", args.a).strip(), git(args.mirror, "rev-parse", args.b).strip()
    dates = {c: git(args.mirror, "show", "-s", "--format=%cs", c).strip() for c in (a, b)}
    changed = len(git(args.mirror, "diff", "--name-only", a, b).split())
    name = args.mirror.parent.name.split("+")[-1] if args.mirror.name == "repo" else args.mirror.name
    try:
        runs = {
            "kbc": switches(HERE, clone(args.mirror, a, work / "switched" / "astropy"), a, b, args.vectors)
        }
        if args.baseline_src:
            target = clone(args.mirror, a, work / "baseline" / "astropy")
            runs["baseline"] = switches(args.baseline_src.resolve(), target, a, b, args.vectors)
        cold_a, _ = cold(HERE, clone(args.mirror, a, work / "cold-a" / "astropy"), args.vectors)
        cold_b, _ = cold(HERE, clone(args.mirror, b, work / "cold-b" / "astropy"), args.vectors)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    of = {"cold build at A": cold_a, "A → B": cold_b, "B → A (back)": cold_a, "A → B (again)": cold_b}
    what = "embeddings on (the packaged model, --wait)" if args.vectors else "lexical (KBC_EMBED_MODEL=none)"
    lines = [
        f"{name} `{a[:10]}` ({dates[a]}) ↔ `{b[:10]}` ({dates[b]}), "
        f"{changed} files differ; {what}, `--no-llm`, one run. Cold builds of the same commit in "
        f"fresh clones: A {cold_a.wall:.1f} s ({cold_a.cpu:.1f} CPU-s), "
        f"B {cold_b.wall:.1f} s ({cold_b.cpu:.1f} CPU-s); the ratios are to these.",
        "",
        "| code | run | path | wall | ÷ cold wall | CPU | ÷ cold CPU | parsed (from cache) "
        "| files chunked (from chunk cache) | units embedded |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for code, measured in runs.items():
        for label, sample, data in measured:
            lines.append(f"| {code} " + row(label, sample, of[label], data))
    report(
        "\n".join(lines),
        args.update_results,
        "branch-switch",
        "A branch switch is a refresh",
        "python benchmarks/branch_switch.py --baseline-src <the code before> --update-results",
    )


if __name__ == "__main__":
    main()
