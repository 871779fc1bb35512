"""Agent hooks: the task's slice put in front of an agent's own turn, for agents that reach for
grep before an MCP tool. ``kbc hook user-prompt-submit`` answers Claude Code's UserPromptSubmit
hook; ``kbc hooks install claude-code`` writes the project's hook configuration."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from kbc.cli.common import settings_for

EVENT_BYTES = 1_000_000  # of a hook event read from stdin: a prompt, not a file
SETTINGS_BYTES = 1_000_000  # of an agent's settings file read before it is rewritten
HOOK_COMMAND = "kbc hook user-prompt-submit"
CLAUDE_SETTINGS = ".claude/settings.json"


@click.group()
def hook() -> None:
    """Answer an agent's hook event (JSON on stdin) with the task's slice."""


@hook.command("user-prompt-submit")
@click.option(
    "--repo",
    type=click.Path(file_okay=False, path_type=Path),
    help="The repository (default: the event's cwd, else the current folder).",
)
@click.option("--budget", type=click.IntRange(100), help="Tokens of the slice (default: hooks.budget).")
def user_prompt_submit(repo: Path | None, budget: int | None) -> None:
    """Claude Code's UserPromptSubmit hook: read the event on stdin and print the hook answer
    whose additionalContext is the prompt's slice (its path:start-end blocks).

    Silent (nothing printed, exit 0) when the event has no prompt, the repository has no
    build, or the slice's confidence is low: the turn goes on as if there were no hook. Any
    error is one line on stderr, never a failed turn.
    """
    try:
        event = json.loads(sys.stdin.buffer.read(EVENT_BYTES) or b"{}")
    except ValueError:
        click.echo("kbc hook: the event on stdin is not JSON; nothing added", err=True)
        return
    prompt = event.get("prompt") if isinstance(event, dict) else None
    if not isinstance(prompt, str) or not prompt.strip():
        return
    where = repo or Path(str(event.get("cwd") or "."))
    context = _context(where, prompt, budget)
    if context:
        click.echo(
            json.dumps(
                {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context}},
                ensure_ascii=False,
            )
        )


def _context(where: Path, prompt: str, budget: int | None) -> str:
    """The slice of ``prompt`` in the repository at ``where``, or "" (no build, low confidence,
    any error: said on stderr)."""
    from kbc.domain.errors import KbcError
    from kbc.services.knowledge import KnowledgeBase
    from kbc.store.layout import state_file, store_path

    try:
        settings = settings_for(where)
        if not state_file(store_path(where.resolve(), settings)).is_file():
            return ""  # no build: nothing to add, and no time spent
        with KnowledgeBase(where, settings=settings) as kb:
            found = kb.retrieve(prompt, "implementation", budget or settings.hook_budget)
    except KbcError as error:
        click.echo(f"kbc hook: nothing added ({error.message})", err=True)
        return ""
    floor = settings.hook_min_confidence
    low = found.low_confidence if floor < 0 else 0 <= found.confidence < floor
    if low or not found.items:
        return ""
    return (
        "kbc: the repository's code and knowledge most relevant to this request, by path and "
        "line range (read more with your tools if you need it):\n\n" + found.text
    )


@click.group()
def hooks() -> None:
    """Install kbc's agent hooks in a project."""


@hooks.command("install")
@click.argument("agent", type=click.Choice(["claude-code"]))
@click.option(
    "--repo",
    type=click.Path(file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="The project whose hook configuration is written.",
)
def install(agent: str, repo: Path) -> None:
    """Write the project's hook configuration for AGENT (claude-code: .claude/settings.json,
    a UserPromptSubmit hook running `kbc hook user-prompt-submit`), keeping what is there.
    Running it again changes nothing. Nothing is read or written through a link: a
    .claude or .claude/settings.json that is one is refused."""
    from kbc.domain.errors import KbcError, TargetError
    from kbc.store.files import read_inside, write_inside

    if not repo.is_dir():
        raise TargetError(f"{repo} is no folder", hint="pass --repo the project's folder")
    target = repo / CLAUDE_SETTINGS
    data: dict[str, Any] = {}
    try:
        raw = read_inside(repo, CLAUDE_SETTINGS, SETTINGS_BYTES)
    except OSError as exc:
        raise KbcError(f"{target} cannot be read: {exc.strerror or exc}") from None
    if raw is not None:
        try:
            loaded = json.loads(raw)
        except RecursionError:
            raise click.ClickException(
                f"{target} is nested too deeply; fix it or move it aside first"
            ) from None
        except ValueError:
            raise click.ClickException(f"{target} is not JSON; fix it or move it aside first") from None
        if not isinstance(loaded, dict):
            raise click.ClickException(f"{target} is not a JSON object; fix it or move it aside first")
        data = loaded
    entries = _entries(data, target)
    if any(
        h.get("command") == HOOK_COMMAND
        for e in entries
        if isinstance(e, dict)
        for h in e.get("hooks", [])
        if isinstance(h, dict)
    ):
        click.echo(f"{target}: the kbc hook is already there")
        return
    entries.append({"hooks": [{"type": "command", "command": HOOK_COMMAND, "timeout": 30}]})
    try:
        write_inside(repo, CLAUDE_SETTINGS, json.dumps(data, indent=2) + "\n")
    except RecursionError:
        raise click.ClickException(f"{target} is nested too deeply; fix it or move it aside first") from None
    except OSError as exc:
        raise KbcError(f"{target} cannot be written: {exc.strerror or exc}") from None
    click.echo(f"{target}: UserPromptSubmit runs `{HOOK_COMMAND}` (build the store first: kbc build)")


def _entries(data: dict[str, Any], target: Path) -> list[Any]:
    """The UserPromptSubmit entries of ``data``, made when missing."""
    hooks = data.setdefault("hooks", {})
    entries = hooks.setdefault("UserPromptSubmit", []) if isinstance(hooks, dict) else None
    if not isinstance(entries, list):
        raise click.ClickException(
            f"{target}: hooks.UserPromptSubmit is not a list; fix it or move the file aside first"
        )
    return entries
