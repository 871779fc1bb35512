"""Agent hooks: the task's slice put in front of an agent's own turn, for agents that reach for
grep before an MCP tool. ``kbc hook user-prompt-submit`` answers Claude Code's UserPromptSubmit
hook; ``kbc hooks install claude-code`` writes the project's hook configuration."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, BinaryIO

import click

from kbc.cli.common import settings_for

EVENT_BYTES = 16_000_000  # of a hook event read from stdin: a prompt, however long, not a file
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
@click.pass_context
def user_prompt_submit(ctx: click.Context, repo: Path | None, budget: int | None) -> None:
    """Claude Code's UserPromptSubmit hook: read the event on stdin and print the hook answer
    whose additionalContext is the prompt's slice (its path:start-end blocks).

    Silent (nothing printed, exit 0) when the event has no prompt, the repository has no
    build, or the slice's confidence is low: the turn goes on as if there were no hook. Any
    error (an event that is not JSON, nested too deeply or over 16 MB included) is one line on
    stderr and exit 0, never a failed turn.
    """
    try:
        _answer(repo, budget)
    except Exception as exc:  # whatever happens, the agent's turn goes on without the hook
        root = ctx.find_root().obj
        if isinstance(root, dict) and root.get("debug"):
            raise
        from kbc.domain.errors import describe

        click.echo(f"kbc hook: nothing added ({describe(exc)})", err=True)


def _answer(repo: Path | None, budget: int | None) -> None:
    event = _event(sys.stdin.buffer)
    if isinstance(event, str):
        click.echo(f"kbc hook: {event}; nothing added", err=True)
        return
    prompt = event.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return
    from kbc.retrieval.query import MAX_TASK_CHARS

    if len(prompt) > MAX_TASK_CHARS:
        click.echo(
            f"kbc hook: the prompt has {len(prompt):,} characters; "
            f"its first {MAX_TASK_CHARS:,} characters are the task",
            err=True,
        )
        prompt = prompt[:MAX_TASK_CHARS]
    prompt = prompt.encode("utf-8", "replace").decode("utf-8")  # half a surrogate pair: "?"
    where = repo or Path(str(event.get("cwd") or "."))
    context = _context(where, prompt, budget)
    if context:
        click.echo(
            json.dumps(
                {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context}},
                ensure_ascii=False,
            )
        )


def _event(stream: BinaryIO) -> dict[str, Any] | str:
    """The hook event on ``stream``, read whole (at most :data:`EVENT_BYTES`); an event that
    is not an object is an empty one. What is wrong with it when it cannot be read."""
    raw = stream.read(EVENT_BYTES + 1)
    if len(raw) > EVENT_BYTES:
        while stream.read(1 << 20):  # the agent writes it whole before it reads an answer
            pass
        return f"the event on stdin is over {EVENT_BYTES:,} bytes"
    try:
        event = json.loads(raw or b"{}")
    except RecursionError:
        return "the event on stdin is nested too deeply to read"
    except ValueError:
        return "the event on stdin is not JSON"
    return event if isinstance(event, dict) else {}


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
