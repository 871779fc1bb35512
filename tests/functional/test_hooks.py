"""Agent hooks: Claude Code's UserPromptSubmit event answered with the task's slice, silent when
there is nothing worth adding, and the project's hook configuration written once."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from helpers import LEXICAL, RepoFactory

from kbc.cli.hooks import EVENT_BYTES
from kbc.cli.main import cli
from kbc.retrieval.query import MAX_TASK_CHARS
from kbc.services.components import Components
from kbc.services.knowledge import KnowledgeBase

SHOP = {
    "shop/__init__.py": '"""A shop."""\n',
    "shop/refunds.py": '''
        """Refunds."""


        def validate_refund(amount, paid):
            """A refund is valid when positive and not above what was paid."""
            return 0 < amount <= paid
    ''',
}


def run_hook(event: object, *args: str, floor: str = "0.01") -> Result:
    """The hook run on ``event`` (JSON, or the text or bytes given); ``floor``:
    hooks.min_confidence (a repository this small is never confident by the measured floor).
    It always exits 0: a hook never fails the agent's turn."""
    text = event if isinstance(event, (str, bytes)) else json.dumps(event)
    result = CliRunner().invoke(
        cli,
        [*LEXICAL, "-c", f"hooks.min_confidence={floor}", "hook", "user-prompt-submit", *args],
        input=text,
    )
    assert result.exit_code == 0, (result.output, result.exception)
    return result


def hook(event: object, *args: str, floor: str = "0.01") -> str:
    """The hook's answer to ``event``."""
    return run_hook(event, *args, floor=floor).stdout


@pytest.fixture
def built(make_repo: RepoFactory) -> Path:
    root = make_repo(SHOP)
    with KnowledgeBase(root, components=Components.lexical()) as kb:
        kb.build(no_llm=True)
    return root


def test_a_prompt_gets_its_slice_as_additional_context(built: Path) -> None:
    out = hook(
        {
            "session_id": "s",
            "hook_event_name": "UserPromptSubmit",
            "cwd": str(built),
            "prompt": "why is validate_refund refusing a refund above what was paid?",
        }
    )
    answer = json.loads(out)
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert answer["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert re.search(r"### shop/refunds\.py:\d+-\d+", context) and "def validate_refund" in context
    smaller = json.loads(hook({"cwd": str(built), "prompt": "validate_refund"}, "--budget", "150"))
    assert len(smaller["hookSpecificOutput"]["additionalContext"]) < len(context)


def test_the_hook_is_silent_when_it_has_nothing_to_add(built: Path, make_repo: RepoFactory) -> None:
    assert hook({"cwd": str(make_repo(SHOP)), "prompt": "validate_refund"}) == ""  # no build
    assert hook({"cwd": str(built), "prompt": "quantum zebra flux capacitor calibration"}, floor="-1") == ""
    assert hook({"cwd": str(built), "prompt": "   "}) == ""
    assert hook("not json", "--repo", str(built)) == ""


def test_hooks_install_writes_the_project_configuration_once(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(ls)"]}}), encoding="utf-8")
    runner = CliRunner()
    for _ in range(2):
        result = runner.invoke(cli, ["hooks", "install", "claude-code", "--repo", str(tmp_path)])
        assert result.exit_code == 0, result.output
    data = json.loads(settings.read_text(encoding="utf-8"))
    assert data["permissions"] == {"allow": ["Bash(ls)"]}
    assert data["hooks"]["UserPromptSubmit"] == [
        {"hooks": [{"type": "command", "command": "kbc hook user-prompt-submit", "timeout": 30}]}
    ]
    settings.write_text("{not json", encoding="utf-8")
    broken = runner.invoke(cli, ["hooks", "install", "claude-code", "--repo", str(tmp_path)])
    assert broken.exit_code != 0 and "is not JSON" in broken.output


def test_a_deeply_nested_or_broken_event_adds_nothing_and_says_why(built: Path) -> None:
    deep = json.dumps({"prompt": "validate_refund", "cwd": str(built), "extra": 0})
    deep = deep.replace("0}", "[" * 100_000 + "]" * 100_000 + "}")
    nested = run_hook(deep)
    assert nested.stdout == "" and "nested too deeply" in nested.stderr
    broken = run_hook("not json", "--repo", str(built))
    assert broken.stdout == "" and "not JSON" in broken.stderr
    assert run_hook(b"\xff\xfe{", "--repo", str(built)).stdout == ""
    for event in (
        {"prompt": "validate_refund", "cwd": f"{built}\x00"},
        {"prompt": "validate_refund", "cwd": "x" * 5000},
        ["a", "list"],
    ):
        answered = run_hook(event)
        assert answered.stdout == "" and "Traceback" not in answered.stderr
    # half of a surrogate pair (an emoji cut in two) costs the prompt nothing but itself
    halved = run_hook({"prompt": "validate_refund \ud83d of a cut emoji", "cwd": str(built)})
    assert "def validate_refund" in json.loads(halved.stdout)["hookSpecificOutput"]["additionalContext"]


def test_a_prompt_over_a_megabyte_is_read_whole_and_its_start_is_the_task(built: Path) -> None:
    prompt = "why does validate_refund refuse this refund?\n" + "the log says: nothing useful\n" * 60_000
    assert len(prompt) > 1_500_000
    answered = run_hook({"cwd": str(built), "prompt": prompt})
    context = json.loads(answered.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "def validate_refund" in context
    assert "not JSON" not in answered.stderr
    assert f"its first {MAX_TASK_CHARS:,} characters are the task" in answered.stderr


def test_an_event_over_the_limit_is_reported_as_too_large(built: Path) -> None:
    event = json.dumps({"cwd": str(built), "prompt": "validate_refund " * (EVENT_BYTES // 16 + 1)})
    assert len(event) > EVENT_BYTES
    answered = run_hook(event)
    assert answered.stdout == ""
    assert f"over {EVENT_BYTES:,} bytes" in answered.stderr and "not JSON" not in answered.stderr


def install(repo: Path) -> Result:
    return CliRunner().invoke(cli, ["hooks", "install", "claude-code", "--repo", str(repo)])


def tree(folder: Path) -> dict[str, str]:
    """Every entry under ``folder``: a link's target, a file's text, a folder's "/"."""
    found: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        name = str(path.relative_to(folder))
        if path.is_symlink():
            found[name] = "-> " + str(path.readlink())
        elif path.is_dir():
            found[name] = "/"
        else:
            found[name] = path.read_text(encoding="utf-8")
    return found


@pytest.mark.parametrize(
    ("link", "to"),
    [
        (".claude", "home/.claude"),  # the user's global settings folder
        (".claude/settings.json", "home/.claude/settings.json"),  # the user's settings file
        (".claude/settings.json", "home/.claude/absent.json"),  # a file it would create
        (".claude", "repo/inside"),  # a link inside the repository is refused too
        (".claude/settings.json", "repo/inside/settings.json"),
    ],
)
def test_hooks_install_refuses_a_link_and_writes_nothing(tmp_path: Path, link: str, to: str) -> None:
    home = tmp_path / "home" / ".claude"
    home.mkdir(parents=True)
    (home / "settings.json").write_text('{"model": "the user\'s own"}\n', encoding="utf-8")
    repo = tmp_path / "repo"
    (repo / "inside").mkdir(parents=True)
    (repo / "inside" / "settings.json").write_text("{}\n", encoding="utf-8")
    (repo / link).parent.mkdir(parents=True, exist_ok=True)
    (repo / link).symlink_to(tmp_path / to)
    before = tree(tmp_path)
    result = install(repo)
    assert result.exit_code != 0
    assert f"{repo / link} is a link" in result.output and "remove the link" in result.output
    assert "Traceback" not in result.output and not isinstance(result.exception, OSError)
    assert tree(tmp_path) == before  # nothing written, inside or out, no file left beside


def test_hooks_install_replaces_the_file_whole_and_keeps_its_mode(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("{}\n", encoding="utf-8")
    elsewhere.chmod(0o640)
    settings = tmp_path / "repo" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.hardlink_to(elsewhere)  # the same file under two names: only the repository's changes
    result = install(tmp_path / "repo")
    assert result.exit_code == 0, result.output
    assert elsewhere.read_text(encoding="utf-8") == "{}\n"
    assert "kbc hook user-prompt-submit" in settings.read_text(encoding="utf-8")
    assert settings.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in settings.parent.iterdir()] == ["settings.json"]
    missing = install(tmp_path / "nowhere")
    assert missing.exit_code != 0 and "no folder" in missing.output
    assert not (tmp_path / "nowhere").exists()
