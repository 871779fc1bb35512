"""The README's first command on this very repository: the slice it prints (the first index,
lexical, before the facts are read) answers its question with the code that keeps a slice
within its budget, `kbc/retrieval/pack.py`, first or with at least 40 % of the tokens.

The command's task and budget are read from the README itself, so a change of either, or of
the code it is asked about, is checked here. What the slice is once the facts and then the
vectors are in is measured by ``python -m benchmarks readme_example``."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from kbc.cli.main import cli
from kbc.store.lock import fill_lock

ROOT = Path(__file__).resolve().parents[2]
ANSWER = "kbc/retrieval/pack.py"
SHARE = 0.4


def readme_command() -> tuple[str, int]:
    """The task and the budget of the README's first command's ``kbc retrieve``."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first = re.search(r"```bash\n(.*?)\n", text)
    if first is None:
        pytest.fail("the README starts with a bash block holding its first command")
    words = shlex.split(first.group(1).split("kbc retrieve", 1)[1])
    budget = int(words[words.index("--budget") + 1])
    return words[-1], budget


def shares(items: list[dict[str, object]]) -> Counter[str]:
    tokens: Counter[str] = Counter()
    for item in items:
        tokens[str(item["path"])] += int(str(item["tokens"]))
    return tokens


@pytest.mark.slow
@pytest.mark.xfail(
    raises=AssertionError,  # only the slice's check: a build or a command that fails is a failure
    strict=True,
    reason="issue 53, not reached: the first slice starts with kbc/serve/mcp.py and holds no line of "
    "kbc/retrieval/pack.py (benchmarks/RESULTS.md, the README's example); strict, so that the day it "
    "holds this marker must go",
)
def test_the_readme_example_is_answered_by_the_packer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("not a checkout of the repository: the README's example is asked of one")
    monkeypatch.setenv("KBC_EMBED_MODEL", "none")
    task, budget = readme_command()
    store = tmp_path / "store"
    store.mkdir()
    runner = CliRunner()
    with fill_lock(store):  # the process the build starts for the facts waits for it: stopped below
        built = runner.invoke(cli, ["build", str(ROOT), "--store", str(store), "--format", "json"])
        if built.exit_code != 0:
            pytest.fail(f"kbc build failed: {built.output}")
        summary = json.loads(built.stdout)
        try:
            if summary["later"] != "facts":
                pytest.fail("the README's first command prints a first index, and this build published none")
            asked = runner.invoke(
                cli,
                ["retrieve", "--repo", str(ROOT), "--store", str(store), "--budget", str(budget)]
                + ["--format", "json", task],
            )
            if asked.exit_code != 0:
                pytest.fail(f"kbc retrieve failed: {asked.output}")
        finally:
            if summary.get("filling"):
                os.kill(summary["filling"], signal.SIGKILL)
    found = json.loads(asked.stdout)
    tokens = shares(found["items"])
    first = found["items"][0]["path"]
    share = tokens[ANSWER] / sum(tokens.values())
    assert first == ANSWER or share >= SHARE, (first, tokens.most_common(5))
