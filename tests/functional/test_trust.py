"""A repository's own configuration cannot send its code or the user's key anywhere, nor move the
store out of the repository; the user's configuration can, and can trust a repository."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import LEXICAL, RepoFactory
from llm_server import Reply, chat_server

from kbc.cli.main import cli

REPO = {
    "app/__init__.py": '"""App."""\n',
    "app/core.py": 'def run():\n    """Run the app."""\n    return 1\n',
}


@pytest.fixture
def hostile(make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    # the user's own environment holds their key; the repository's configuration must not send it
    monkeypatch.setenv("KBC_LLM_API_KEY", "sk-user-secret-key-0123456789")
    monkeypatch.delenv("KBC_LLM_MODEL", raising=False)
    monkeypatch.delenv("KBC_LLM_API_BASE", raising=False)
    monkeypatch.delenv("KBC_STORE", raising=False)
    return make_repo(REPO)


@pytest.mark.slow
def test_a_repository_config_pointing_at_a_server_sends_it_nothing(
    hostile: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    with chat_server(lambda _r: Reply("The app runs [app/core.py:1-3].")) as server:
        (hostile / "kbc.toml").write_text(
            f'[llm]\nmodel = "openai/test-model"\napi_base = "{server.url}"\n[store]\npath = "{elsewhere}"\n'
        )
        runner = CliRunner()
        built = runner.invoke(cli, [*LEXICAL, "build", str(hostile)])
        assert built.exit_code == 0, built.output
        asked = runner.invoke(cli, [*LEXICAL, "ask", "how does the app run?", "--repo", str(hostile)])
        assert asked.exit_code == 0, asked.output
        assert server.calls() == 0
        assert not elsewhere.exists() and (hostile / ".kbc").is_dir()
        for result in (built, asked):
            assert "warning: kbc.toml: llm.api_base" in result.stderr
            assert "warning: kbc.toml: store.path" in result.stderr
            assert "KBC_LLM_API_BASE" in result.stderr

        # the user allows this repository's configuration: now it is honoured
        monkeypatch.setenv("KBC_TRUST_REPOSITORIES", str(hostile))
        trusted = runner.invoke(
            cli,
            [
                *LEXICAL,
                "ask",
                "how does the app run?",
                "--repo",
                str(hostile),
                "--store",
                str(hostile / ".kbc"),
            ],
        )
        assert trusted.exit_code == 0, trusted.output
        assert server.calls() == 1 and "warning" not in trusted.stderr
        assert server.requests[0]["model"] == "test-model"


def test_a_committed_store_link_is_refused(hostile: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (hostile / ".kbc").symlink_to(outside)
    result = CliRunner().invoke(cli, [*LEXICAL, "build", str(hostile)])
    assert result.exit_code == 2
    assert "is a link to" in result.stderr and "--store" in result.stderr
    assert list(outside.iterdir()) == []


@pytest.mark.slow
def test_a_repository_s_git_configuration_runs_nothing(hostile: Path, tmp_path: Path) -> None:
    """git runs what a repository's .git/config names (an fsmonitor hook on nearly every
    command, an external diff, a pager): kbc's git calls override each of them."""
    import os
    import subprocess

    from helpers import GIT_ENV

    ran = tmp_path / "ran"
    for key in ("core.fsmonitor", "diff.external", "core.pager"):
        subprocess.run(["git", "-C", str(hostile), "config", key, f"touch {ran}-{key}; false"], check=True)
    runner = CliRunner()
    assert runner.invoke(cli, [*LEXICAL, "build", "--no-llm", str(hostile)]).exit_code == 0
    (hostile / "app" / "core.py").write_text('def run():\n    """Run it."""\n    return 2\n')
    subprocess.run(
        ["git", "-C", str(hostile), "-c", "core.fsmonitor=false", "commit", "-qam", "two"],
        check=True,
        env={**os.environ, **GIT_ENV},
    )  # the test's own commit runs nothing
    refreshed = runner.invoke(cli, [*LEXICAL, "refresh", "--no-llm", str(hostile)])
    assert refreshed.exit_code == 0, refreshed.output
    runner.invoke(cli, [*LEXICAL, "drift", "--repo", str(hostile)])
    assert not list(tmp_path.glob("ran-*"))
