"""docs/cli.md, generated from the commands' --help (a test keeps the file current):

python -m kbc.cli.docs > docs/cli.md
"""

from __future__ import annotations

import click

WIDTH = 100


def _help(command: click.Command, name: str, parent: click.Context | None = None) -> str:
    context = click.Context(
        command,
        info_name=name,
        parent=parent,
        terminal_width=WIDTH,
        max_content_width=WIDTH,
        help_option_names=["-h", "--help"],
    )
    return command.get_help(context)


def cli_reference() -> str:
    from kbc.cli.main import cli

    root = click.Context(
        cli,
        info_name="kbc",
        terminal_width=WIDTH,
        max_content_width=WIDTH,
        help_option_names=["-h", "--help"],
    )
    parts = [
        "# Command-line reference",
        "",
        "Generated from `kbc --help` by `python -m kbc.cli.docs > docs/cli.md`; "
        "a test fails when it is out of date.",
        "",
        "```text",
        _help(cli, "kbc"),
        "```",
        "",
    ]
    for name in sorted(cli.commands):
        parts += [f"## kbc {name}", "", "```text", _help(cli.commands[name], name, root), "```", ""]
    return "\n".join(parts)


if __name__ == "__main__":
    click.echo(cli_reference(), nl=False)
