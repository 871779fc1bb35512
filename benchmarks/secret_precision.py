"""How often the secret screen is right: precision on real packages, recall on planted credentials.

    python benchmarks/secret_precision.py [--work DIR] [--baseline COMMIT] [--only NAME,...]
        [--label] [--reuse] [--update-results]

Each package of :data:`PACKAGES` (pinned versions of 50 popular packages: HTTP clients, cloud
SDKs, auth and crypto libraries, web frameworks, database drivers, task queues, tools) is
fetched as its source distribution from PyPI's simple index, checked against its sha256 and
unpacked under ``WORK/src`` (``WORK`` is ``~/.cache/kbc-bench/secrets`` unless given; fetched
code never enters this repository). Every text file kbc would read (its ``discover``) is read
as the credential sweep reads it and screened by kbc (``file_findings``, with the file's path
in its tree); so is the planted repository of ``tests/planted.py``, written to
``WORK/planted``. A finding is a line the screen flags; each goes to
``WORK/findings-<run>.jsonl`` with its package, path, line, detectors, values masked and the
line with the values masked.

A package's finding is matched with its label in ``benchmarks/secrets/labels.jsonl`` (by
package, path and line; the versions are pinned): ``credential`` when a security reviewer
would want it hidden, ``placeholder`` when it is a placeholder, an example, a test's fixture, a
test or example key, public material or data that only looks random. A finding in the planted
repository is a credential when its line holds a planted value. Precision is credential
lines over all lines flagged; recall is the planted values that no file, redacted as a build
redacts it (the repository-wide sweep included), still holds, over all planted values.

``--baseline COMMIT`` runs the same scan with the ``kbc`` package of that commit too (exported
with ``git archive`` into ``WORK``): one run gives the figures before and after a change. Each
scan runs in a process of its own with the code it measures first on its path. ``--label``
prints the findings no label covers; ``--reuse`` reports on the last run's findings.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from real_packages import fetch, normalized
from results_file import update_section
from secret_precision_scan import scan_planted, scan_tree

HERE = Path(__file__).resolve()
REPO = HERE.parents[1]
LABELS = HERE.with_name("secrets") / "labels.jsonl"
DATE = "2026-12-07"

# name, version: popular packages that handle credentials (clients, SDKs, auth, crypto, web
# frameworks, databases, queues) and general libraries, applications and tools.
PACKAGES = (
    ("boltons", "25.0.0"),
    ("requests", "2.32.3"),
    ("urllib3", "2.3.0"),
    ("httpx", "0.28.1"),
    ("boto3", "1.35.90"),
    ("botocore", "1.35.90"),
    ("paramiko", "3.5.0"),
    ("cryptography", "44.0.0"),
    ("django", "5.1.4"),
    ("flask", "3.1.0"),
    ("sqlalchemy", "2.0.36"),
    ("celery", "5.4.0"),
    ("kombu", "5.4.2"),
    ("redis", "5.2.1"),
    ("pymongo", "4.10.1"),
    ("psycopg", "3.2.3"),
    ("oauthlib", "3.2.2"),
    ("requests-oauthlib", "2.0.0"),
    ("authlib", "1.4.0"),
    ("pyjwt", "2.10.1"),
    ("itsdangerous", "2.2.0"),
    ("werkzeug", "3.1.3"),
    ("jinja2", "3.1.5"),
    ("click", "8.1.8"),
    ("rich", "13.9.4"),
    ("pydantic", "2.10.3"),
    ("fastapi", "0.115.6"),
    ("starlette", "0.41.3"),
    ("aiohttp", "3.11.11"),
    ("yarl", "1.18.3"),
    ("tornado", "6.4.2"),
    ("twisted", "24.11.0"),
    ("sentry-sdk", "2.19.2"),
    ("stripe", "11.4.1"),
    ("twilio", "9.4.1"),
    ("slack-sdk", "3.34.0"),
    ("google-auth", "2.37.0"),
    ("azure-core", "1.32.0"),
    ("docker", "7.1.0"),
    ("ansible-core", "2.18.1"),
    ("httpie", "3.2.4"),
    ("pyopenssl", "24.3.0"),
    ("hvac", "2.3.0"),
    ("python-dotenv", "1.0.1"),
    ("passlib", "1.7.4"),
    ("openai", "1.58.1"),
    ("huggingface-hub", "0.27.0"),
    ("dj-database-url", "2.3.0"),
    ("social-auth-core", "4.5.4"),
    ("ldap3", "2.9.1"),
)

Key = tuple[str, str, int]  # package, path, line


# -- the scan, in a process of its own with the code it measures --------------------------


def scan(out: Path, work: Path, only: set[str]) -> None:
    """The scan's entry point in its child process: findings of every package, then of the
    planted repository, and the recall."""
    with out.open("w") as sink:
        for name, version in PACKAGES:
            if only and name not in only:
                continue
            tree = work / "src" / f"{normalized(name)}-{version}"
            findings, files, seconds = scan_tree(name, version, tree)
            for row in findings:
                row.pop("_found")
                sink.write(json.dumps(row, ensure_ascii=False) + "\n")
            sink.write(json.dumps({"summary": name, "files": files, "seconds": round(seconds, 2)}) + "\n")
            print(
                f"{name} {version}: {files} files, {len(findings)} lines flagged, {seconds:.1f} s", flush=True
            )
        findings, files, seconds, recall = scan_planted(work)
        for row in findings:
            row.pop("_found")
            sink.write(json.dumps(row, ensure_ascii=False) + "\n")
        sink.write(json.dumps({"summary": "planted", "files": files, "seconds": round(seconds, 2)}) + "\n")
        sink.write(json.dumps({"recall": recall}) + "\n")


# -- the parent: fetch, run each scan, match the labels, report ----------------------------


def baseline_code(commit: str, work: Path) -> Path:
    """The ``kbc`` package of ``commit``, exported into ``WORK/baseline-COMMIT``."""
    target = work / f"baseline-{commit}"
    if not (target / "kbc").is_dir():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", commit, "kbc"], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def run_scan(code: Path, work: Path, name: str, only: set[str], reuse: bool = False) -> Path:
    """The findings of the kbc at ``code``, in a child process with it first on the path
    (``reuse``: those of the last run, when there are some)."""
    out = work / f"findings-{name}{'-' + '-'.join(sorted(only)) if only else ''}.jsonl"
    if reuse and out.exists():
        return out
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(code), str(HERE.parent)])}
    command = [sys.executable, str(HERE), "--work", str(work), "--scan", str(out)]
    if only:
        command += ["--only", ",".join(sorted(only))]
    subprocess.run(command, env=env, check=True, cwd=work)
    return out


def read_labels() -> dict[Key, dict[str, Any]]:
    """(package, path, line) -> its label row; a row labels some lines of one file alike."""
    labels: dict[Key, dict[str, Any]] = {}
    if LABELS.exists():
        for line in LABELS.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                for number in row["lines"]:
                    labels[(row["package"], row["path"], number)] = row
    return labels


def measure(findings_file: Path, labels: dict[Key, dict[str, Any]]) -> dict[str, Any]:
    """The lines flagged in the packages and in the planted repository, by label; precision over
    both (credential lines over all lines flagged), by package and by detector; the recall."""
    rows = [json.loads(line) for line in findings_file.read_text().splitlines()]
    findings = [r for r in rows if "line" in r]
    summaries = {r["summary"]: r for r in rows if "summary" in r}
    by_label: Counter[str] = Counter()
    by_package: dict[str, Counter[str]] = {}
    by_detector: dict[str, Counter[str]] = {}
    unlabelled, false = [], []
    for row in findings:
        if row["package"] == "planted":
            kind = "credential" if row["planted"] else "placeholder"
        else:
            label = labels.get((row["package"], row["path"], row["line"]))
            kind = label["label"] if label else "unlabelled"
            if not label:
                unlabelled.append(row)
            elif kind == "placeholder":
                false.append({**row, "reason": label["reason"]})
        by_label[kind] += 1
        by_package.setdefault(row["package"], Counter())[kind] += 1
        for detector in row["detectors"]:
            by_detector.setdefault(detector, Counter())[kind] += 1
    judged = by_label["credential"] + by_label["placeholder"]
    planted = by_package.get("planted", Counter())
    return {
        "lines": len(findings),
        "credential": by_label["credential"],
        "placeholder": by_label["placeholder"],
        "unlabelled": unlabelled,
        "false": false,
        "planted_lines": planted["credential"] + planted["placeholder"],
        "planted_true": planted["credential"],
        "precision": by_label["credential"] / judged if judged else 1.0,
        "by_package": by_package,
        "by_detector": by_detector,
        "files": {name: r["files"] for name, r in summaries.items()},
        "seconds": sum(r["seconds"] for r in summaries.values()),
        "recall": next(r["recall"] for r in rows if "recall" in r),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path.home() / ".cache" / "kbc-bench" / "secrets")
    parser.add_argument("--baseline", help="a commit whose kbc to measure too (before a change)")
    parser.add_argument("--only", default="", help="package names, comma-separated")
    parser.add_argument("--scan", type=Path, help=argparse.SUPPRESS)  # the child's output file
    parser.add_argument("--label", action="store_true", help="print the unlabelled findings")
    parser.add_argument("--reuse", action="store_true", help="report on the last run's findings")
    parser.add_argument("--update-results", action="store_true")
    args = parser.parse_args()
    work = args.work.expanduser().resolve()
    only = {n for n in args.only.split(",") if n}
    if args.scan:
        scan(args.scan, work, only)
        return
    for name, version in PACKAGES:
        if not only or name in only:
            fetch(name, version, work)
    labels = read_labels()
    measured: dict[str, dict[str, Any]] = {}
    if args.baseline:
        before = baseline_code(args.baseline, work)
        measured[f"before ({args.baseline})"] = measure(
            run_scan(before, work, "before", only, args.reuse), labels
        )
    measured["after"] = measure(run_scan(REPO, work, "after", only, args.reuse), labels)
    for name, figures in measured.items():
        recall = figures["recall"]
        print(
            f"{name}: {figures['lines']} lines flagged ({figures['credential']} credential, "
            f"{figures['placeholder']} not, {len(figures['unlabelled'])} unlabelled), "
            f"precision {figures['precision']:.1%}, recall {recall['caught']}/{recall['planted']} "
            f"(missed: {', '.join(recall['missed']) or 'none'})"
        )
    if args.label:
        for figures in measured.values():
            for row in figures["unlabelled"]:
                print(json.dumps(row, ensure_ascii=False))
    if args.update_results:
        command = "python benchmarks/secret_precision.py" + (
            f" --baseline {args.baseline}" if args.baseline else ""
        )
        text = report(measured, len(labels))
        update_section("secret-precision", "Secret screen precision", text, command + " --update-results")


def _percent(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "n/a"


def report(measured: dict[str, dict[str, Any]], labelled: int) -> str:
    """The RESULTS.md section: the figures before and after, per package, what is left."""
    names = list(measured)
    after = measured["after"]
    packages = [p for p in after["files"] if p != "planted"]
    files = sum(n for p, n in after["files"].items() if p != "planted")
    lines = [
        f"Run {DATE}: {len(packages)} packages (pinned source distributions from PyPI, "
        f"{files:,} text files as kbc discovers them) and the planted repository of "
        f"`tests/planted.py` ({after['recall']['planted']} credentials in "
        f"{after['files'].get('planted', 0)} files). A finding is a line the screen flags.",
        "",
        "| | " + " | ".join(names) + " |",
        "| --- |" + " ---: |" * len(names),
    ]

    def row(title: str, value: Any) -> None:
        lines.append(f"| {title} | " + " | ".join(str(value(measured[n])) for n in names) + " |")

    row("lines flagged in the packages", lambda m: f"{m['lines'] - m['planted_lines']:,}")
    row("… labelled credential", lambda m: m["credential"] - m["planted_true"])
    row("… labelled placeholder, example, fixture, test key or data", lambda m: f"{len(m['false']):,}")
    row("… unlabelled", lambda m: len(m["unlabelled"]))
    row("lines flagged in the planted repository", lambda m: m["planted_lines"])
    row("… holding a planted credential", lambda m: m["planted_true"])
    row("**precision** (credential lines / lines flagged)", lambda m: f"**{m['precision']:.1%}**")
    row(
        "**recall** (planted credentials no redacted file holds)",
        lambda m: f"**{m['recall']['caught']}/{m['recall']['planted']}**",
    )
    row("detectors' seconds (one process)", lambda m: f"{m['seconds']:.0f}")
    lines += ["", "Left flagged after the change (labelled not credentials):", ""]
    lines += [
        f"- {r['package']} `{r['path']}:{r['line']}` ({', '.join(r['detectors'])}): {r['reason']}"
        for r in after["false"]
    ] or ["- none"]
    lines += ["", "| package | files | lines flagged " + " | lines flagged ".join(names) + " |"]
    lines.append("| --- | ---: |" + " ---: |" * len(names))
    for package in sorted(after["files"]):
        counts = [sum(measured[n]["by_package"].get(package, Counter()).values()) for n in names]
        lines.append(
            f"| {package} | {after['files'][package]:,} | " + " | ".join(f"{c:,}" for c in counts) + " |"
        )
    lines += [
        "",
        f"Labels: {labelled:,} lines in `benchmarks/secrets/labels.jsonl`, each with its reason. No line"
        " of the packages is a credential a reviewer would want hidden: they are test suites'"
        " fixtures and keys, certificates and public keys, documentation samples (AWS's `…EXAMPLE`"
        " keys, RFC 6749's tokens, `scott:tiger`), doctest output, hashes and ids. Test suites'"
        " fixtures and certificate bodies were labelled by file after reading samples of each;"
        " every other value was read with its line (each value flagged outside test suites and"
        " certificate blocks that reads as random, every token in an issuer's format, and the list"
        " of the other distinct values). So the packages measure the false positives, and the"
        " planted credentials are the true ones: precision is counted over both. Recall counts a"
        " planted value caught when no file of the planted repository, redacted as a build"
        " redacts it, still holds it.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
