"""Redaction end to end: no credential value reaches a store file or an output.

    python benchmarks/redaction_corpus.py --detect-secrets PATH [--update-results]

Corpora, each built cold as a git repository with `kbc build --no-llm` (hybrid, the
packaged model) in a process of its own:

- ``planted``: kbc's planted-secrets corpus (``tests/planted.py``, 45 forms);
- ``detect-secrets``: the ``test_data`` folder of a detect-secrets checkout (PATH;
  never committed here), whose values are those detect-secrets itself finds there;
- ``kbc``: kbc's own repository (a fresh clone), for what redaction costs and how much
  it redacts in a code base that holds only test fixtures.

For each: the values, how many of them are found in any file under the store (SQLite,
Chroma, facts, caches) or in the output of `kbc retrieve` (every use case, a set of
queries), and the seconds of the build's ``secrets`` pass against the whole build.
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

from results_file import update_section
from timing import clock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
QUERIES = (
    "password",
    "api key token secret",
    "private key",
    "configuration settings",
    "database connection",
    "authorization header bearer",
    "aws credentials",
    "slack webhook",
)
USE_CASES = ("implementation", "qa", "architecture")
GIT = {
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@kbc.invalid",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@kbc.invalid",
}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KBC_")}
    return {**env, **GIT, "KBC_CONFIG": "", "ORT_DISABLE_TELEMETRY": "1"}


def _repository(where: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        path = where / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "corpus"]):
        subprocess.run(["git", "-C", str(where), *args], check=True, env=_env(), capture_output=True)
    return where


def planted_corpus() -> tuple[dict[str, bytes], set[str]]:
    from planted import planted

    files, values = planted()
    return {k: v.encode() for k, v in files.items()}, set(values.values())


def detect_secrets_corpus(checkout: Path) -> tuple[dict[str, bytes], set[str]]:
    """The files of detect-secrets' test data and the values detect-secrets finds in them."""
    from detect_secrets.core.scan import scan_file

    from kbc.analyzers.secrets import _configure

    _configure()
    base = checkout / "test_data"
    files: dict[str, bytes] = {}
    values: set[str] = set()
    for path in sorted(p for p in base.rglob("*") if p.is_file()):
        rel = path.relative_to(base).as_posix()
        if rel.startswith("performance/"):
            continue  # megabytes of generated JSON: a speed test, not a form
        files[rel] = path.read_bytes()
        values |= {s.secret_value for s in scan_file(str(path)) if s.secret_value}
    return files, values


def kbc_corpus() -> tuple[dict[str, bytes], set[str]]:
    listed = (
        subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], check=True, capture_output=True)
        .stdout.decode()
        .split("\0")
    )
    files = {rel: (ROOT / rel).read_bytes() for rel in listed if rel and (ROOT / rel).is_file()}
    return files, set()


def measure(name: str, files: dict[str, bytes], values: set[str], work: Path) -> dict[str, object]:
    repo = _repository(work / name, files)
    kbc = [sys.executable, "-m", "kbc"]
    with clock() as building:
        built = subprocess.run(
            [*kbc, "build", "--no-llm", "--format", "json", str(repo)],
            env=_env(),
            capture_output=True,
            text=True,
            check=True,
        )
    seconds = building.wall
    summary = json.loads(built.stdout)
    passes = {p["name"]: p["seconds"] for p in summary["passes"]}
    stored = "\n".join(
        p.read_bytes().decode("utf-8", "replace") for p in (repo / ".kbc").rglob("*") if p.is_file()
    )
    outputs = "\n".join(
        subprocess.run(
            [
                *kbc,
                "retrieve",
                "--repo",
                str(repo),
                "--use-case",
                use_case,
                "--budget",
                "30000",
                "--format",
                "json",
                query,
            ],
            env=_env(),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for use_case in USE_CASES
        for query in QUERIES
    )
    lowered_store, lowered_out = stored.lower(), outputs.lower()
    return {
        "corpus": name,
        "files": len(files),
        "values": len(values),
        "store_leaks": sum(1 for v in values if v in stored or v.lower() in lowered_store),
        "output_leaks": sum(1 for v in values if v in outputs or v.lower() in lowered_out),
        "redacted": summary["index"]["secrets"],
        "retrieval": summary["index"]["retrieval"],
        "secrets_seconds": round(passes.get("secrets", 0.0), 2),
        "build_seconds": round(seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--detect-secrets", type=Path, required=True, help="a checkout of github.com/Yelp/detect-secrets"
    )
    parser.add_argument("--update-results", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kbc-redaction-"))
    try:
        rows = [
            measure("planted", *planted_corpus(), work),
            measure("detect-secrets", *detect_secrets_corpus(args.detect_secrets), work),
            measure("kbc", *kbc_corpus(), work),
        ]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = [
        "| corpus | files | values | in a store file | in an output | lines redacted | secrets pass "
        "| whole build |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['corpus']} | {r['files']} | {r['values']} | {r['store_leaks']} | "
            f"{r['output_leaks']} | {r['redacted']} | {r['secrets_seconds']} s | "
            f"{r['build_seconds']} s |"
        )
    table = "\n".join(lines)
    print(table)
    if args.update_results:
        text = (
            f"Retrieval {rows[0]['retrieval']}; queries: "
            f"{len(QUERIES)} × use cases {', '.join(USE_CASES)} at 30,000 tokens, JSON output.\n\n" + table
        )
        update_section(
            "redaction",
            "Redaction end to end",
            text,
            "python benchmarks/redaction_corpus.py --detect-secrets PATH --update-results",
        )


if __name__ == "__main__":
    main()
