"""What the views look like on a corpus of real packages: a row of quality figures per package.

    python benchmarks/views_corpus.py --work DIR [--packages NAME==VER ... | --shape SHAPE] [--jobs 1]
        [--timeout S] [--markdown]

Each package (by default :data:`PACKAGES`, pinned versions of some 60 packages of seven
shapes: flat libraries, frameworks, CLIs, applications, data-science, utility libraries of
independent modules, tools with sub-commands; the tools' sources were read while kbc's
reading of dispatches was written, the others' not before their rows) is fetched as its sdist with
``pip download --no-deps --no-binary :all:``
into ``WORK/dl`` (once), unpacked into ``WORK/src/NAME-VER`` and committed to a fresh git
repository there (kbc reads the files git tracks), then built from nothing, lexical and
without an LLM (``kbc -c index.embed_model=none build DIR --no-llm``: the views' prose comes
from docstrings), and its views read back with ``kbc views --format json``. Per package:

- Python files, components (``module`` views, and the architecture's module groups) and
  the dependencies between them (the architecture's ``dependencies``);
- workflows: how many start at the public API (``public_api`` entry points) and how many
  elsewhere (by entry point kind: ``main_guard``, ``console_script``, ...);
- entry points listed by the ``entry_points`` view, how many are ``main_guard``, and the
  examples it lists apart (a library's ``if __name__ == "__main__":`` blocks);
- unresolved citations: every ``path:start[-end]`` string in the views' facts whose path is
  not a tracked file of the repository, or whose lines are not in it;
- empty sections: interpretation fields (overview, purpose, summary, ...) left empty;
- where the prose came from: views by ``provenance.source`` (llm, docstring, none);
- the build's wall seconds;
- business rules: the guards the ``business_rules`` views list (and leave out past their cap);
- the checks of :mod:`views_checks` that can fail: the package's purpose is stated and is not
  one module's docstring, no demo block is a workflow, every public module has a module view
  of its own (not asked of a tool with sub-commands), the build summary's integrations are
  the views'; for the tools with sub-commands, each listed sub-command's workflow reaches the
  function that does its work (:mod:`views_commands`); the names of those failed.

A Markdown table goes to stdout with ``--markdown`` (else a tab-separated one), every
figure to ``WORK/views_corpus.json`` (rewritten after each package). A package whose
download, unpacking, build or views fail gets a row saying so; the run goes on.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path
from typing import Any

from timing import clock
from views_checks import checks
from views_commands import subcommand_check
from views_corpus_sources import Failure, download, git, normalized, parse_spec, tail, unpack
from views_corpus_table import markdown, tab_separated
from views_figures import Lines, figures

# (NAME==VERSION, shape): each an sdist on PyPI with fewer than ~400 Python files (typer 0.15.1,
# 586 with its docs' examples, and pyramid 2.0.2, 557, were left out for that).
PACKAGES: tuple[tuple[str, str], ...] = (
    # flat libraries
    ("rich==13.9.4", "library"),
    ("httpx==0.28.1", "library"),
    ("jinja2==3.1.4", "library"),
    ("attrs==24.2.0", "library"),
    ("more-itertools==10.5.0", "library"),
    ("python-dateutil==2.9.0.post0", "library"),
    ("toolz==1.0.0", "library"),
    ("structlog==24.4.0", "library"),
    ("tenacity==9.0.0", "library"),
    ("arrow==1.3.0", "library"),
    ("markdown==3.7", "library"),
    ("pluggy==1.5.0", "library"),
    ("sqlparse==0.5.2", "library"),
    # frameworks and servers
    ("starlette==0.41.3", "framework"),
    ("bottle==0.13.2", "framework"),
    ("falcon==4.0.2", "framework"),
    ("cherrypy==18.10.0", "framework"),
    ("quart==0.19.9", "framework"),
    ("sanic==24.6.0", "framework"),
    ("waitress==3.0.2", "framework"),
    # command-line tools
    ("cleo==2.1.0", "cli"),
    ("cookiecutter==2.6.0", "cli"),
    ("invoke==2.2.0", "cli"),
    ("fire==0.7.0", "cli"),
    ("twine==6.0.1", "cli"),
    # applications
    ("mkdocs==1.6.1", "application"),
    ("pelican==4.10.2", "application"),
    ("datasette==0.65.1", "application"),
    ("radicale==3.3.1", "application"),
    # data science
    ("tabulate==0.9.0", "data-science"),
    ("patsy==1.0.1", "data-science"),
    ("seaborn==0.13.2", "data-science"),
    ("pint==0.24.4", "data-science"),
    ("lifelines==0.30.0", "data-science"),
    ("petl==1.7.15", "data-science"),
    ("uncertainties==3.2.2", "data-science"),
    # utility libraries of independent modules (modules that barely import each other)
    ("boltons==26.2.0", "utilities"),
    ("utils==1.0.2", "utilities"),
    ("utilspie==0.1.0", "utilities"),
    ("ipython-genutils==0.2.0", "utilities"),
    ("fastapi-utils==0.8.0", "utilities"),
    ("lightning-utilities==0.15.3", "utilities"),
    ("oslo.utils==10.2.0", "utilities"),
    ("pyutil==3.4.1", "utilities"),
    ("pydu==0.8.0", "utilities"),
    ("requests-toolbelt==1.0.0", "utilities"),
    # tools with sub-commands (each dispatched: sub-parsers' set_defaults, a dispatch table, a
    # chain on the command, a registration); views_commands.WORK says what each one runs
    ("pipx==1.7.1", "subcommands"),
    ("pre-commit==4.0.1", "subcommands"),
    ("httpie==3.2.4", "subcommands"),
    ("tox==4.23.2", "subcommands"),
    ("wheel==0.48.0", "subcommands"),
    ("pyperf==2.11.0", "subcommands"),
    ("gita==0.16.8.2", "subcommands"),
    ("nb-clean==4.0.1", "subcommands"),
    ("coverage==7.18.0", "subcommands"),
    ("git-machete==3.46.1", "subcommands"),
    ("flit==4.2.0", "subcommands"),
)


def kbc_env() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("KBC_LLM_MODEL", "KBC_EMBED_MODEL", "KBC_CHROMA_URL", "KBC_WAIT_UNITS"):
        env.pop(name, None)
    return env


def build(tree: Path, timeout: float) -> tuple[float, dict[str, Any]]:
    """``kbc build --no-llm``, lexical, from nothing: its wall seconds and JSON summary. The
    build runs in a process group of its own, so a timeout ends its workers too."""
    shutil.rmtree(tree / ".kbc", ignore_errors=True)
    command = [
        sys.executable,
        "-m",
        "kbc",
        "-c",
        "index.embed_model=none",
        "build",
        str(tree),
        "--no-llm",
        "--format",
        "json",
    ]
    with clock() as building:
        child = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=kbc_env(),
            start_new_session=True,
        )
        try:
            stdout, stderr = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            raise Failure("build", f"timed out after {timeout:.0f} s") from None
    seconds = building.wall
    if child.returncode != 0:
        raise Failure("build", f"exit {child.returncode}: {tail(stderr)}")
    try:
        summary: dict[str, Any] = json.loads(stdout)
    except json.JSONDecodeError:
        summary = {}
    return seconds, summary


def read_views(tree: Path) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "kbc", "views", "--repo", str(tree), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
        env=kbc_env(),
        timeout=600,
    )
    if done.returncode != 0:
        raise Failure("views", f"exit {done.returncode}: {tail(done.stderr)}")
    try:
        views = json.loads(done.stdout)
    except json.JSONDecodeError as exc:
        raise Failure("views", f"not JSON: {exc}") from exc
    if not isinstance(views, list):
        raise Failure("views", f"expected a list of views, got {type(views).__name__}")
    return views


def run_one(spec: str, shape: str, work: Path, timeout: float) -> dict[str, Any]:
    name, version = parse_spec(spec)
    row: dict[str, Any] = {"package": f"{name}=={version}", "shape": shape, "status": "ok"}
    with clock() as whole:
        try:
            archive = download(name, version, work / "dl")
            row["sdist"] = archive.name
            tree = unpack(archive, work / "src" / f"{normalized(name)}-{version}")
            row["tree"] = str(tree)
            seconds, summary = build(tree, timeout)
            row["build_seconds"] = round(seconds, 1)
            analyze = summary.get("analyze", {})
            row["not_analyzed"] = analyze.get("failed")
            row["build_views"] = summary.get("views", {}).get("by_kind")
            views = read_views(tree)
            lines = Lines(tree, set(git(tree, "ls-files", "-z").split("\0")) - {""})
            row.update(figures(views, lines))
            row["checks"] = checks(views, tree, lines.tracked, summary)
            if shape == "subcommands":  # a tool is not a library of independent modules
                row["checks"]["modules"] = None
                row["checks"].update(subcommand_check(views, normalized(name)))
        except Failure as failure:
            row["status"] = f"{failure.stage} failed"
            row["error"] = failure.detail
        except (OSError, subprocess.SubprocessError) as exc:
            row["status"] = "failed"
            row["error"] = f"{type(exc).__name__}: {exc}"
    row["seconds"] = round(whole.wall, 1)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="downloads, sources and the JSON results")
    parser.add_argument(
        "--packages", nargs="+", metavar="NAME==VER", help="packages to build instead of the default list"
    )
    parser.add_argument("--shape", help="only the default packages of this shape (utilities, cli, ...)")
    parser.add_argument("--jobs", type=int, default=1, help="packages built at once")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds a build may take")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = parser.parse_args()
    shapes = {normalized(parse_spec(spec)[0]): shape for spec, shape in PACKAGES}
    chosen = (
        [(spec, shapes.get(normalized(parse_spec(spec)[0]), "")) for spec in args.packages]
        if args.packages
        else [(spec, shape) for spec, shape in PACKAGES if args.shape in (None, shape)]
    )
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    out = work / "views_corpus.json"
    rows: dict[int, dict[str, Any]] = {}
    lock = threading.Lock()

    def one(numbered: tuple[int, tuple[str, str]]) -> None:
        n, (spec, shape) = numbered
        row = run_one(spec, shape, work, args.timeout)
        figure = (
            f"{row['build_seconds']:.0f} s build, {row['views']} views, "
            f"{row['unresolved_citations']} unresolved"
            if row["status"] == "ok"
            else row.get("error", "")
        )
        with lock:
            rows[n] = row
            done = [rows[i] for i in sorted(rows)]
            out.write_text(
                json.dumps(
                    {"date": date.today().isoformat(), "command": sys.argv, "packages": done}, indent=1
                )
                + "\n"
            )
            print(
                f"[{len(rows)}/{len(chosen)}] {row['package']}: {row['status']} ({figure})",
                file=sys.stderr,
                flush=True,
            )

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        list(pool.map(one, enumerate(chosen)))
    ordered = [rows[i] for i in sorted(rows)]
    print(markdown(ordered) if args.markdown else tab_separated(ordered))
    print(f"every figure: {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
