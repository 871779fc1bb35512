"""Views of command-line tools whose sub-commands are dispatched: by a sub-parser's
``set_defaults(func=...)``, by a dispatch table, and by a chain on the command (one through
a package's re-export, ``commands.write``, which is also a submodule's name). Each
sub-command's workflow starts at its dispatch and reaches the function that does the work;
the tools' development scripts are not entry points."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import RepoFactory

from kbc.domain.settings import Settings
from kbc.domain.views import View
from kbc.services.analyze import analyze_repository
from kbc.services.views import build_views_pass

TOOLS = {
    "pyproject.toml": """
        [project]
        name = "tools"
        version = "1.0"

        [project.scripts]
        tasker = "tasker.cli:main"
        notes = "notes.cli:main"
        jot = "jot.cli:main"
    """,
    "tasker/__init__.py": '"""A to-do list on the command line."""\n',
    "tasker/store.py": '''
        """Where the tasks are kept."""

        TASKS: dict[str, bool] = {}


        def add_task(title: str) -> None:
            """Keep a new task, not done."""
            TASKS[title] = False


        def finish_task(title: str) -> None:
            """Mark a task done."""
            TASKS[title] = True
    ''',
    "tasker/cli.py": '''
        """The tasker command."""

        import argparse

        from tasker.store import add_task, finish_task


        def cmd_add(args: argparse.Namespace) -> int:
            add_task(args.title)
            return 0


        def cmd_done(args: argparse.Namespace) -> int:
            finish_task(args.title)
            return 0


        def build_parser() -> argparse.ArgumentParser:
            parser = argparse.ArgumentParser(prog="tasker")
            subparsers = parser.add_subparsers(dest="command")
            add = subparsers.add_parser("add")
            add.add_argument("title")
            add.set_defaults(func=cmd_add)
            done = subparsers.add_parser("done")
            done.add_argument("title")
            done.set_defaults(func=cmd_done)
            return parser


        def main() -> int:
            args = build_parser().parse_args()
            return args.func(args)
    ''',
    "notes/__init__.py": '"""Notes kept in a folder."""\n',
    "notes/pages.py": '''
        """The notes' pages."""

        from pathlib import Path


        def write_page(folder: Path, title: str) -> Path:
            """Write an empty page for a new note."""
            page = folder / f"{title}.md"
            page.write_text(f"# {title}\\n")
            return page


        def page_titles(folder: Path) -> list[str]:
            """The titles of the notes in the folder."""
            return sorted(p.stem for p in folder.glob("*.md"))
    ''',
    "notes/cli.py": '''
        """The notes command."""

        import argparse
        from pathlib import Path

        from notes.pages import page_titles, write_page


        def new_note(args: argparse.Namespace) -> int:
            write_page(Path(args.folder), args.title)
            return 0


        def list_notes(args: argparse.Namespace) -> int:
            print("\\n".join(page_titles(Path(args.folder))))
            return 0


        COMMANDS = {"new": new_note, "list": list_notes}


        def main() -> int:
            parser = argparse.ArgumentParser(prog="notes")
            parser.add_argument("command", choices=sorted(COMMANDS))
            parser.add_argument("folder")
            parser.add_argument("title", nargs="?")
            args = parser.parse_args()
            return COMMANDS[args.command](args)
    ''',
    "jot/__init__.py": '"""Jot lines down in a journal."""\n',
    "jot/journal.py": '''
        """The journal."""

        LINES: list[str] = []


        def append_line(text: str) -> None:
            """Add a line at the journal's end."""
            LINES.append(text)


        def last_lines(count: int) -> list[str]:
            """The journal's last lines."""
            return LINES[-count:]
    ''',
    "jot/commands/__init__.py": '''
        """What jot's commands do."""

        from jot.commands.write import write
    ''',
    "jot/commands/write.py": '''
        """Writing to the journal."""

        from jot.journal import append_line


        def write(words: list[str]) -> None:
            """Write the words as one line."""
            append_line(" ".join(words))
    ''',
    "jot/cli.py": '''
        """The jot command."""

        import sys

        from jot import commands
        from jot.journal import last_lines


        def main() -> int:
            command = sys.argv[1]
            if command == "write":
                commands.write(sys.argv[2:])
            elif command == "show":
                print("\\n".join(last_lines(int(sys.argv[2]))))
            return 0
    ''',
    "scripts/release.py": '''
        """Tag a release (run by maintainers)."""

        import argparse
        import subprocess


        def main() -> None:
            parser = argparse.ArgumentParser()
            parser.add_argument("version")
            subprocess.run(["git", "tag", parser.parse_args().version], check=True)


        if __name__ == "__main__":
            main()
    ''',
}
# sub-command -> (where it is dispatched, what it runs first, the function that does the work)
DISPATCHED = {
    "add": ("tasker/cli.py:23", "tasker.cli.cmd_add", "tasker.store.add_task"),
    "done": ("tasker/cli.py:26", "tasker.cli.cmd_done", "tasker.store.finish_task"),
    "new": ("notes/cli.py:19", "notes.cli.new_note", "notes.pages.write_page"),
    "list": ("notes/cli.py:19", "notes.cli.list_notes", "notes.pages.page_titles"),
    "write": ("jot/cli.py:11", "jot.commands.write.write", "jot.journal.append_line"),
    "show": ("jot/cli.py:13", "jot.journal.last_lines", "jot.journal.last_lines"),
}


@pytest.fixture(scope="module")
def views(tmp_path_factory: pytest.TempPathFactory) -> dict[str, View]:
    from helpers import repo_factory

    make: RepoFactory = repo_factory(tmp_path_factory.mktemp("tools"))
    root: Path = make(TOOLS)
    analyze_repository(root, Settings(workers=1))
    built, _ = build_views_pass(root / ".kbc", root, Settings(workers=1), no_llm=True)
    return {v.id: v for v in built}


def _entries(views: dict[str, View]) -> list[dict[str, Any]]:
    return list(views["entry_points"].facts["entry_points"])


def test_each_sub_command_is_an_entry_point_at_its_dispatch(views: dict[str, View]) -> None:
    found = {
        e["name"]: (e["location"], e["target"]) for e in _entries(views) if e["kind"] != "console_script"
    }
    assert found == {name: (where, first) for name, (where, first, _) in DISPATCHED.items()}


def test_each_sub_command_workflow_reaches_the_function_that_does_the_work(views: dict[str, View]) -> None:
    for name, (_, first, worker) in DISPATCHED.items():
        flow = views[f"workflow:{first}"].facts
        assert flow["entry_point"]["name"] == name or any(e["name"] == name for e in flow["also_via"])
        assert worker in [step["symbol"] for step in flow["steps"]]


def test_no_workflow_starts_where_a_parser_is_built_nor_at_a_dev_script(views: dict[str, View]) -> None:
    flows = [i for i in views if i.startswith("workflow:")]
    assert "workflow:tasker.cli.build_parser" not in flows
    assert not any(i.startswith("workflow:scripts.") for i in flows)
    listed = _entries(views) + list(views["entry_points"].facts.get("examples", []))
    assert not any(e["location"].startswith("scripts/") for e in listed)
