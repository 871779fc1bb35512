"""`kbc init-ci` prints the CI configurations docs/ci.md shows, word for word."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kbc.cli.main import cli

DOC = Path(__file__).resolve().parents[3] / "docs" / "ci.md"


@pytest.mark.parametrize("flag", ["--github", "--gitlab"])
def test_init_ci_prints_the_configuration_of_the_docs(flag: str) -> None:
    printed = CliRunner().invoke(cli, ["init-ci", flag])
    assert printed.exit_code == 0, printed.output
    assert f"```yaml\n{printed.output}```" in DOC.read_text(encoding="utf-8")
    parsed = yaml.safe_load(printed.output)
    steps = str(parsed)
    assert "kbc refresh --ci" in steps and "kbc publish" in steps
    assert "AWS_SECRET_ACCESS_KEY" in printed.output and "cache" in steps


def test_init_ci_prints_the_github_workflow_by_default() -> None:
    assert (
        CliRunner().invoke(cli, ["init-ci"]).output == CliRunner().invoke(cli, ["init-ci", "--github"]).output
    )
