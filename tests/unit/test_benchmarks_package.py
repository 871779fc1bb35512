"""The benchmarks as one package: every measurement named by ``python -m benchmarks --list``,
and the scoreboard of RESULTS.md exactly what its sections' rows make (a row edited by hand in
the table, or a section's row without the table regenerated, fails here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks", *args], cwd=ROOT, capture_output=True, text=True
    )


def test_every_script_that_runs_is_listed_with_what_it_measures() -> None:
    listed = run("--list")
    assert listed.returncode == 0, listed.stderr
    names = {line.split()[0] for line in listed.stdout.splitlines() if line.strip()}
    scripts = {
        p.stem for p in (ROOT / "benchmarks").glob("*.py") if 'if __name__ == "__main__":' in p.read_text()
    }
    assert names == scripts - {"__main__"}
    assert {"shapes", "first_slice", "scoreboard"} <= names
    assert all(len(line.split(maxsplit=1)) == 2 for line in listed.stdout.splitlines() if line.strip())
    unknown = run("no_such_measurement")
    assert unknown.returncode == 2 and "--list" in unknown.stderr


def test_the_scoreboard_is_regenerated_byte_for_byte_from_its_sections() -> None:
    checked = run("scoreboard", "--check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    results = (ROOT / "benchmarks" / "RESULTS.md").read_text()
    table = results.split("<!-- scoreboard:start -->")[1].split("<!-- scoreboard:end -->")[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| ---")]
    assert len(rows) - 1 == results.count("\n<!-- scoreboard: | ")  # the header, then one per section row
