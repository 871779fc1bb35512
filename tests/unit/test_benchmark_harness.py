"""The benchmarks' one harness: interleaved rounds in a rotated order with the load read
around them, and a section written between its markers with the machine's line and its
scoreboard rows, the scoreboard regenerated from them."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture()
def harness() -> Iterator[tuple[ModuleType, ModuleType]]:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        yield importlib.import_module("timing"), importlib.import_module("results_file")
    finally:
        sys.path.remove(str(BENCHMARKS))


def test_rounds_rotate_so_no_variant_always_runs_first(harness: tuple[ModuleType, ModuleType]) -> None:
    timing, _ = harness
    order: list[str] = []
    load = timing.Load()
    samples = timing.interleaved(
        {name: (lambda name=name: order.append(name)) for name in ("kbc", "floor", "other")}, 3, load
    )
    assert order == ["kbc", "floor", "other", "floor", "other", "kbc", "other", "kbc", "floor"]
    assert {name: len(runs) for name, runs in samples.items()} == {"kbc": 3, "floor": 3, "other": 3}
    assert len(load.readings) == 4  # before the rounds and after each
    assert all(s.wall >= 0 and s.cpu >= 0 for runs in samples.values() for s in runs)
    ratios = timing.ratios(samples, "floor")
    assert ratios["floor"] == 1.0
    with pytest.raises(ValueError):
        timing.interleaved({"kbc": lambda: None}, 0)


def test_a_clock_charges_the_cpu_of_a_child_process(harness: tuple[ModuleType, ModuleType]) -> None:
    timing, _ = harness
    import subprocess

    with timing.clock() as sample:
        subprocess.run([sys.executable, "-c", "sum(i * i for i in range(3_000_000))"], check=True)
    assert sample.cpu > 0.05 and sample.wall >= sample.cpu * 0.2


RESULTS = """# Benchmark results

<!-- scoreboard:start -->
| What is measured | Today's figure | Target or baseline it is compared with | Section |
| --- | --- | --- | --- |
| Old | 1 | 2 | Facts (then) |
<!-- scoreboard:end -->

## Facts

<!-- scoreboard: | Old | 1 | 2 | Facts (then) | -->

<!-- analyze:start -->
old figures
<!-- analyze:end -->

## Other

<!-- other:start -->
kept
<!-- other:end -->
"""


def test_a_section_is_written_with_its_machine_line_and_rows(harness: tuple[ModuleType, ModuleType]) -> None:
    timing, results = harness
    load = timing.Load()
    load.read()
    row = results.row("Facts ÷ floor", "1.1×", "target ≤ 2× | or so", "Facts (today)")
    assert row == "<!-- scoreboard: | Facts ÷ floor | 1.1× | target ≤ 2× / or so | Facts (today) | -->"
    text = results.written(
        RESULTS, "analyze", "Facts", "new figures", "python -m benchmarks analyze", load, [row]
    )
    assert "old figures" not in text and "new figures" in text and "kept" in text
    assert "\n| Facts ÷ floor | 1.1× | target ≤ 2× / or so | Facts (today) |\n" in text  # the table
    assert text.count("<!-- scoreboard: |") == 1 and "Old" not in text
    assert f"{row} <!-- by: python -m benchmarks analyze -->\n" in text
    assert "load average" in text and "cores" in text and "Command: `python -m benchmarks analyze`" in text
    # a new section, with a row, lands at the end with its heading; sections without rows keep theirs
    added = results.written(
        text, "fresh", "Fresh", "figures", "cmd", rows=[results.row("F", "1", "2", "Fresh")]
    )
    assert (
        added.index("## Fresh") < added.index("<!-- scoreboard: | F |") < added.index("<!-- fresh:start -->")
    )
    assert (
        added.count("<!-- scoreboard: |") == 2 and "| F | 1 | 2 | Fresh |" in added.split("scoreboard:end")[0]
    )
    # no rows given: the section's rows stay as they are
    again = results.written(added, "analyze", "Facts", "newer", "cmd")
    assert again.count("<!-- scoreboard: |") == 2 and "newer" in again


def test_each_scoreboard_row_says_which_command_produced_it(harness: tuple[ModuleType, ModuleType]) -> None:
    scoreboard = importlib.import_module("scoreboard")
    results = RESULTS.replace(
        "<!-- scoreboard: | Old | 1 | 2 | Facts (then) | -->",
        "<!-- scoreboard: | Old | 1 | 2 | Facts (then) | -->"
        " <!-- by: python -m benchmarks analyze --repeat 3 -->\n"
        "<!-- scoreboard: | Eval | 0.9 | 0.8 | Facts (then) | -->"
        " <!-- by: kbc build . && kbc eval --golden g.yaml -->\n"
        "<!-- scoreboard: | Lost | 3 | 4 | Facts (then) | -->\n"
        "<!-- scoreboard: | Other | 5 | 6 | Facts (then) | --> <!-- by: python benchmarks/nothing.py -->",
    )
    regenerated = scoreboard.regenerated(results)
    assert "| Eval | 0.9 | 0.8 | Facts (then) |\n| Lost |" in regenerated  # the table: cells only
    assert "by:" not in regenerated.split("<!-- scoreboard:end -->")[0]
    readme = "# Benchmarks\n\n<!-- commands:start -->\nstale\n<!-- commands:end -->\n"
    table = scoreboard.commands_table(results, readme)
    assert "stale" not in table
    assert "| Old | Facts (then) | `python -m benchmarks analyze --repeat 3` |" in table
    assert "| Lost | Facts (then) | |" in table
    wrong = scoreboard.unproduced(results, {"analyze"})
    assert wrong == ["Lost (Facts (then)): no command", "Other (Facts (then)): python benchmarks/nothing.py"]
    assert "analyze" in scoreboard.listed_measurements() and "scoreboard" in scoreboard.listed_measurements()
