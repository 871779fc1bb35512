"""What each sub-command of the views corpus's command-line tools runs, read by hand from their
sources, and the check that their workflows reach it (``benchmarks/views_corpus.py`` runs it
on the packages of the ``subcommands`` shape).

For each tool, some of its sub-commands (by the name a user types; the last word of a nested
one's) and the function that does the work they ask for: what the dispatch selects when it is
the work itself (``nb_clean.cli.clean`` calls ``nb_clean.clean_notebook``: the latter), else
the first function of the product it calls that is more than argument handling. The check
``subcommands`` passes when, for every one of them, a workflow whose entry point (or one of
its ``also_via``) is named by that sub-command has that function among its steps.
"""

from __future__ import annotations

from typing import Any

# package name (normalized) -> {sub-command: the function that does its work}
WORK: dict[str, dict[str, str]] = {
    "pipx": {
        "install": "pipx.commands.install.install",
        "uninstall": "pipx.commands.uninstall.uninstall",
        "run": "pipx.commands.run.run",
        "inject": "pipx.commands.inject.inject",
        "upgrade": "pipx.commands.upgrade.upgrade",
        "list": "pipx.commands.list_packages.list_packages",
        "runpip": "pipx.commands.run_pip.run_pip",
        "ensurepath": "pipx.commands.ensure_path.ensure_pipx_paths",
    },
    "pre-commit": {
        "install": "pre_commit.commands.install_uninstall.install",
        "uninstall": "pre_commit.commands.install_uninstall.uninstall",
        "run": "pre_commit.commands.run.run",
        "autoupdate": "pre_commit.commands.autoupdate.autoupdate",
        "clean": "pre_commit.commands.clean.clean",
        "gc": "pre_commit.commands.gc.gc",
        "try-repo": "pre_commit.commands.try_repo.try_repo",
        "migrate-config": "pre_commit.commands.migrate_config.migrate_config",
    },
    "httpie": {
        "plugins": "httpie.manager.tasks.plugins.cli_plugins",
        "export-args": "httpie.manager.tasks.export_args.cli_export_args",
        "check-updates": "httpie.manager.tasks.check_updates.cli_check_updates",
        "install": "httpie.manager.tasks.plugins.PluginInstaller.install",
        "uninstall": "httpie.manager.tasks.plugins.PluginInstaller.uninstall",
    },
    "tox": {
        "run": "tox.session.cmd.run.sequential.run_sequential",
        "run-parallel": "tox.session.cmd.run.parallel.run_parallel",
        "list": "tox.session.cmd.list_env.list_env",
        "config": "tox.session.cmd.show_config.show_config",
        "devenv": "tox.session.cmd.devenv.devenv",
        "quickstart": "tox.session.cmd.quickstart.quickstart",
        "exec": "tox.session.cmd.exec_.exec_",
    },
    "wheel": {
        "unpack": "wheel._commands.unpack.unpack",
        "pack": "wheel._commands.pack.pack",
        "convert": "wheel._commands.convert.convert",
        "tags": "wheel._commands.tags.tags",
        "info": "wheel._commands.info.info",
    },
    "pyperf": {
        "show": "pyperf.__main__.display_benchmarks",
        "stats": "pyperf.__main__.display_benchmarks",
        "compare_to": "pyperf._compare.compare_suites",
        "timeit": "pyperf._timeit_cli.main",
        "system": "pyperf._system.System.main",
        "hist": "pyperf.__main__.cmd_hist",
    },
    "gita": {
        "add": "gita.utils.add_repos",
        "rm": "gita.utils.write_to_repo_file",
        "rename": "gita.utils.rename_repo",
        "ll": "gita.utils.describe",
    },
    "nb-clean": {
        "clean": "nb_clean.clean_notebook",
        "check": "nb_clean.check_notebook",
        "add-filter": "nb_clean.add_git_filter",
        "remove-filter": "nb_clean.remove_git_filter",
    },
    "coverage": {
        "run": "coverage.cmdline.CoverageScript.do_run",
        "debug": "coverage.cmdline.CoverageScript.do_debug",
        "erase": "coverage.control.Coverage.erase",
        "combine": "coverage.control.Coverage.combine",
        "report": "coverage.control.Coverage.report",
        "html": "coverage.control.Coverage.html_report",
        "json": "coverage.control.Coverage.json_report",
    },
    "git-machete": {
        "add": "git_machete.client.base.MacheteClient.add",
        "advance": "git_machete.client.advance.AdvanceMacheteClient.advance",
        "discover": "git_machete.client.discover.DiscoverMacheteClient.discover",
        "slide-out": "git_machete.client.slide_out.SlideOutMacheteClient.slide_out",
    },
    "flit": {
        "build": "flit.build.main",
        "publish": "flit.upload.main",
        "install": "flit.install.Installer.install",
        "init": "flit.init.TerminalIniter.initialise",
    },
}


def _named(entry: dict[str, Any]) -> str:
    return str(entry.get("name", "")).split(" ")[-1]


def subcommand_check(views: list[dict[str, Any]], package: str) -> dict[str, Any]:
    """Which of the package's sub-commands (:data:`WORK`) have a workflow that reaches their
    work; an empty result for a package without a list."""
    wanted = WORK.get(package)
    if not wanted:
        return {}
    reached = set()
    for view in views:
        if view.get("kind") != "workflow":
            continue
        facts = view.get("facts", {})
        names = {_named(e) for e in [facts.get("entry_point", {}), *facts.get("also_via", [])]}
        steps = {s.get("symbol", "") for s in facts.get("steps", [])}
        reached |= {command for command, work in wanted.items() if command in names and work in steps}
    missing = sorted(set(wanted) - reached)
    return {
        "subcommands": not missing,
        "subcommands_reached": f"{len(wanted) - len(missing)} / {len(wanted)}",
        "subcommands_missing": missing,
    }
