"""What the command modules share: options, settings, error reporting."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from kbc.domain.errors import KbcError

if TYPE_CHECKING:
    from kbc.domain.settings import Settings

F = TypeVar("F", bound=Callable[..., Any])


class KbcGroup(click.Group):
    """kbc's command group: a :class:`KbcError` from any command is reported here, once, as
    ``error: <message>`` and ``→ <hint>`` on stderr, and ends the process with its exit code
    (``--debug`` lets it through with its traceback)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KbcError as error:
            if isinstance(ctx.obj, dict) and ctx.obj.get("debug"):
                raise
            click.echo(f"error: {error}", err=True)
            ctx.exit(error.exit_code)


def unexpected(exc: Exception) -> None:
    """An exception kbc did not expect, as one line (``--debug`` shows the traceback)."""
    from kbc.domain.errors import DEBUG_HINT, describe

    click.echo(f"error: unexpected {describe(exc)} ({DEBUG_HINT})", err=True)
    sys.exit(1)


def settings_for(root: Path, **overrides: Any) -> Settings:
    from kbc.domain.settings import load_settings

    settings = load_settings(root, overrides=overrides)
    for notice in settings.notices:
        click.echo(f"warning: {notice}", err=True)
    return settings


def build_options(command: F) -> F:
    """PATH, --store, --format and --workers: shared by the commands that build."""
    for option in reversed([
        click.argument("path", type=click.Path(file_okay=False, path_type=Path), default="."),
        click.option("--store", "store", type=click.Path(file_okay=False, path_type=Path),
                     help="Store folder (default: <PATH>/.kbc)."),
        click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                     show_default=True, help="Summary format."),
        click.option("--workers", type=int, help="Worker processes (default: one per CPU)."),
    ]):
        command = option(command)
    return command


def reading_options(command: F) -> F:
    """--repo and --store: shared by the commands that read a built store."""
    command = click.option("--store", "store", type=click.Path(file_okay=False, path_type=Path),
                           help="Store folder (default: <repo>/.kbc).")(command)
    return click.option("--repo", "repo", type=click.Path(file_okay=False, path_type=Path),
                        default=".", show_default=True, help="The repository.")(command)
