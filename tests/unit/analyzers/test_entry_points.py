"""Entry points: every way into a program, one style per test."""

import json
from pathlib import Path

from helpers import RepoFactory, analyze_repo, facts_of

from kbc.domain.models import EntryPoint


def points(source: str, **kwargs: object) -> list[tuple[str, str, str, str]]:
    facts = facts_of(source, **kwargs)  # type: ignore[arg-type]
    return [(e.kind, e.name, e.target, e.detail) for e in facts.entry_points]


def test_console_scripts_from_pyproject(make_repo: RepoFactory) -> None:
    root = make_repo(
        {
            "pyproject.toml": """
            [project]
            name = "tool"
            [project.scripts]
            tool = "tool.cli:main"
            [project.gui-scripts]
            tool-gui = "tool.gui:run"
        """,
            "tool/__init__.py": "",
        }
    )
    declared = analyze_repo(root).entry_points()
    assert declared == [
        EntryPoint("console_script", "tool", "tool.cli.main", "pyproject.toml", 4),
        EntryPoint("gui_script", "tool-gui", "tool.gui.run", "pyproject.toml", 6),
    ]


def test_console_scripts_from_pyprojects_entry_points_table(make_repo: RepoFactory) -> None:
    root = make_repo(
        {
            "pyproject.toml": """
            [project]
            name = "tool"
            [project.entry-points.'console_scripts']
            lines = 'tool.scripts.lines:main'
        """,
            "tool/__init__.py": "",
        }
    )
    declared = analyze_repo(root).entry_points()
    assert declared == [EntryPoint("console_script", "lines", "tool.scripts.lines.main", "pyproject.toml", 4)]


def test_a_node_packages_commands_and_scripts_from_package_json(make_repo: RepoFactory) -> None:
    root = make_repo(
        {
            "web/package.json": (
                '{\n  "name": "@shop/web",\n  "bin": "./bin/shop.js",\n'
                '  "scripts": {\n    "build": "tsc -p ."\n  }\n}\n'
            ),
            "web/bin/shop.js": "function main() { return 1; }\nmain();\n",
            "vendor/lib/package.json": '{"name": "lib", "bin": {"lib": "cli.js"}}\n',
            "broken/package.json": '{"name": ',
        }
    )
    store = analyze_repo(root)
    assert store.entry_points() == [
        EntryPoint("npm_bin", "web", "web.bin.shop", "web/package.json", 3, "./bin/shop.js"),
        EntryPoint("npm_script", "build", "tsc -p .", "web/package.json", 5),
    ]
    problems = json.loads((store.generation() / "problems.json").read_text())["metadata"]
    assert [p.split(" (")[0] for p in problems] == ["broken/package.json: not valid JSON"]


def test_console_scripts_from_setup_cfg(make_repo: RepoFactory) -> None:
    root = make_repo(
        {
            "setup.cfg": """
            [metadata]
            name = tool
            [options.entry_points]
            console_scripts =
                tool = tool.cli:main
        """
        }
    )
    (point,) = analyze_repo(root).entry_points()
    assert (point.kind, point.name, point.target, point.line) == (
        "console_script",
        "tool",
        "tool.cli.main",
        5,
    )


def test_console_scripts_from_setup_py() -> None:
    assert points(
        """
        from setuptools import setup
        setup(name="tool", entry_points={"console_scripts": ["tool = tool.cli:main"]})
    """,
        module="setup",
        path="setup.py",
    ) == [("console_script", "tool", "tool.cli.main", "setup.py")]


def test_main_guard_targets_the_first_call() -> None:
    assert points("""
        def main(): ...

        if __name__ == "__main__":
            raise SystemExit(main())
    """) == [("main_guard", "pkg.mod", "pkg.mod.main", "")]


def test_click_command_and_group_subcommand() -> None:
    assert points("""
        import click

        @click.group()
        def cli(): ...

        @cli.command(name="sync")
        def sync_all(): ...

        @click.command()
        def export_data(): ...
    """) == [
        ("click", "cli", "pkg.mod.cli", ""),
        ("click", "sync", "pkg.mod.sync_all", "group pkg.mod.cli"),
        ("click", "export-data", "pkg.mod.export_data", ""),
    ]


def test_typer_app_commands_and_run() -> None:
    assert points("""
        import typer
        app = typer.Typer()

        @app.command()
        def hello_world(): ...

        def main(): ...
        typer.run(main)
    """) == [("typer", "hello-world", "pkg.mod.hello_world", ""), ("typer", "main", "pkg.mod.main", "")]


def test_argparse_parser_and_subcommands() -> None:
    assert points("""
        import argparse

        def main():
            parser = argparse.ArgumentParser(prog="tool")
            sub = parser.add_subparsers()
            sub.add_parser("init")
    """) == [("argparse", "tool", "pkg.mod.main", ""), ("argparse", "init", "pkg.mod.main", "subcommand")]


def test_a_sub_parsers_defaults_select_the_function_it_runs() -> None:
    assert points("""
        import argparse

        def cmd_init(args): ...

        def cmd_sync(args): ...

        def main():
            parser = argparse.ArgumentParser(prog="tool")
            sub = parser.add_subparsers()
            init: argparse.ArgumentParser = sub.add_parser("init")
            init.set_defaults(func=cmd_init)
            sub.add_parser("sync").set_defaults(func=lambda args: cmd_sync(args))
            sub.add_parser("help")
    """) == [
        ("argparse", "tool", "pkg.mod.main", ""),
        ("argparse", "init", "pkg.mod.cmd_init", "subcommand set_defaults"),
        ("argparse", "sync", "pkg.mod.cmd_sync", "subcommand set_defaults"),
        ("argparse", "help", "pkg.mod.main", "subcommand"),
    ]


def test_a_dispatch_table_of_an_argument_parsers_module() -> None:
    assert points("""
        import argparse
        import functools

        def show(args): ...

        def hist(args): ...

        def main(args):
            dispatch = {"show": show, "hist": functools.partial(hist, args)}
            options = {"show": "s", "hist": "h"}
            return dispatch[args.action]()
    """) == [
        ("argparse", "hist", "pkg.mod.hist", "subcommand table"),
        ("argparse", "show", "pkg.mod.show", "subcommand table"),
    ]


def test_a_dispatch_table_named_for_commands_anywhere_and_no_other() -> None:
    assert points("""
        from pkg.tasks import export_args, plugins

        CLI_TASKS = {"export-args": export_args, "plugins": plugins}
        FORMATS = {"json": export_args, "text": plugins}
    """) == [
        ("subcommand", "export-args", "pkg.tasks.export_args", "subcommand table"),
        ("subcommand", "plugins", "pkg.tasks.plugins", "subcommand table"),
    ]


def test_a_chain_on_the_command_runs_the_function_named_like_it_else_what_it_returns() -> None:
    assert points("""
        import argparse
        from pkg import commands, report

        def main(args, mode):
            if args.command == "install-all":
                report.start()
                commands.install_all()
            elif args.command == "list":
                report.start()
                return commands.list_packages()
            elif args.command == "interpreter":
                if args.interpreter_command == "prune":
                    commands.prune()
                elif args.interpreter_command == "show":
                    commands.show()
            elif args.command == "completions":
                raise commands.Unknown(command)
            if mode == "fast":
                commands.fast()
            elif mode == "slow":
                commands.slow()
    """) == [
        ("argparse", "install-all", "pkg.commands.install_all", "subcommand chain"),
        ("argparse", "list", "pkg.commands.list_packages", "subcommand chain"),
        ("argparse", "interpreter prune", "pkg.commands.prune", "subcommand chain"),
        ("argparse", "interpreter show", "pkg.commands.show", "subcommand chain"),
    ]


def test_a_chain_on_a_command_named_field_of_a_module_that_reads_no_command_line() -> None:
    assert (
        points("""
        from pkg.units import to_bytes, _

        def parse_line(root_cmd, details):
            if root_cmd == "virtual_size":
                return to_bytes(details)
            elif root_cmd == "snapshot_list":
                raise ValueError(_("no header"))
    """)
        == []
    )


def test_a_command_registered_with_the_function_it_runs() -> None:
    assert points("""
        def list_env(state): ...

        def tox_add_option(parser):
            parser.add_command("list", ["l"], "list environments", list_env)
            parser.add_argument("--all", help="list all")
    """) == [("subcommand", "list", "pkg.mod.list_env", "subcommand registered")]


def test_a_match_on_the_command() -> None:
    assert points("""
        import sys
        from pkg.work import build, clean

        def main(args=sys.argv):
            match args.command:
                case "build":
                    return build()
                case "clean":
                    return clean()
    """) == [
        ("subcommand", "build", "pkg.work.build", "subcommand chain"),
        ("subcommand", "clean", "pkg.work.clean", "subcommand chain"),
    ]


def test_flask_routes_on_app_and_blueprint() -> None:
    assert points("""
        from flask import Flask, Blueprint
        app = Flask(__name__)
        bp = Blueprint("users", __name__)

        @app.route("/orders", methods=["POST", "GET"])
        def orders(): ...

        @bp.get("/users/<id>")
        def user(id): ...
    """) == [
        ("flask_route", "/orders", "pkg.mod.orders", "GET,POST"),
        ("flask_route", "/users/<id>", "pkg.mod.user", "GET"),
    ]


def test_fastapi_routes_on_app_and_router() -> None:
    assert points("""
        from fastapi import APIRouter, FastAPI
        app = FastAPI()
        router = APIRouter()

        @app.get("/health")
        async def health(): ...

        @router.post("/items")
        def create_item(): ...
    """) == [
        ("fastapi_route", "/health", "pkg.mod.health", "GET"),
        ("fastapi_route", "/items", "pkg.mod.create_item", "POST"),
    ]


def test_django_url_patterns() -> None:
    assert points(
        """
        from django.urls import include, path
        from . import views

        urlpatterns = [
            path("articles/", views.article_list),
            path("about/", views.AboutView.as_view()),
            path("api/", include("api.urls")),
        ]
    """,
        module="site.urls",
        path="site/urls.py",
    ) == [
        ("django_route", "articles/", "site.views.article_list", ""),
        ("django_route", "about/", "site.views.AboutView", ""),
        ("django_route", "api/", "api.urls", "include"),
    ]


def test_entry_point_lines_point_at_the_definition(tmp_path: Path) -> None:
    facts = facts_of("""
        import click


        @click.command()
        def go(): ...
    """)
    assert facts.entry_points[0].line == 4
