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
    from kbc.services.knowledge import KnowledgeBase

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
    """The settings of the repository at ``root``: its configuration, the environment, the
    group's ``-c section.key=value`` and the command's own flags (``overrides``); every
    notice (a field the repository may not set) is a warning on stderr."""
    from kbc.domain.settings import load_settings

    context = click.get_current_context(silent=True)
    found = context.find_root().obj if context is not None else None
    assignments = found.get("assignments", ()) if isinstance(found, dict) else ()
    settings = load_settings(root, overrides=overrides, assignments=assignments)
    for notice in settings.notices:
        click.echo(f"warning: {notice}", err=True)
    return settings


def say(message: str) -> None:
    """A notice on stderr (an automatic refresh, a wait for another writer)."""
    click.echo(message, err=True)


def knowledge_base(
    repo: Path, store: Path | None = None, *, facts: bool = False, **overrides: Any
) -> KnowledgeBase:
    """The knowledge base a command works on, with its settings as :func:`settings_for`
    resolves them and its notices on stderr; ``facts``: the command reads the facts, so on a
    first index it waits for the process after the build to read them, saying so."""
    from kbc.services.knowledge import KnowledgeBase

    settings = settings_for(repo, **overrides)
    kb = KnowledgeBase(repo, store=store, settings=settings, notify=say)
    if facts:
        from kbc.services.later import await_facts

        try:
            await_facts(kb.store, say, settings.lock_timeout)
        except BaseException:
            kb.close()
            raise
    return kb


def build_options(command: F) -> F:
    """PATH, --store, --format and --workers: shared by the commands that build."""
    for option in reversed(
        [
            click.argument("path", type=click.Path(file_okay=False, path_type=Path), default="."),
            click.option(
                "--store",
                "store",
                type=click.Path(file_okay=False, path_type=Path),
                help="Store folder (default: <PATH>/.kbc).",
            ),
            click.option(
                "--format",
                "fmt",
                type=click.Choice(["text", "json"]),
                default="text",
                show_default=True,
                help="Summary format (json: one document on stdout, progress as JSON events on stderr).",
            ),
            click.option("--workers", type=int, help="Worker processes (default: one per CPU)."),
        ]
    ):
        command = option(command)
    return command


def reading_options(command: F) -> F:
    """--repo and --store: shared by the commands that read a built store."""
    command = click.option(
        "--store",
        "store",
        type=click.Path(file_okay=False, path_type=Path),
        help="Store folder (default: <repo>/.kbc).",
    )(command)
    return click.option(
        "--repo",
        "repo",
        type=click.Path(file_okay=False, path_type=Path),
        default=".",
        show_default=True,
        help="The repository.",
    )(command)


PROGRESS_MIN_FILES = 50  # files or units below which no progress is drawn


def embed_progress() -> Callable[[str, int, int], None]:
    """Progress of the embedding on a terminal: units done of the total, the rate and the
    time left once enough is done to say (:func:`kbc.domain.progress.eta`); an interrupted run
    keeps what it embedded, the next one goes on from there."""
    import time

    from kbc.domain.progress import eta

    started = time.monotonic()
    first: list[tuple[int, float]] = []  # the units done and the seconds gone at the first batch

    def report(stage: str, done: int, total: int) -> None:
        if not sys.stderr.isatty() or total < PROGRESS_MIN_FILES:
            return
        elapsed = time.monotonic() - started
        first[:] = first or [(done, elapsed)]
        (first_done, first_seconds), line = first[0], f"\r{stage} {done}/{total} units"
        left = eta(done, total, elapsed, first[0])
        if left is not None:
            rate = (done - first_done) / (elapsed - first_seconds)
            line += f" · {rate:.0f}/s · about {duration(left)} left  "
        click.echo(line, err=True, nl=done >= total)

    return report


def duration(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{max(seconds, 1):.0f} s"
