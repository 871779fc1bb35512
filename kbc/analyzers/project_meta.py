"""Entry points declared in packaging metadata: pyproject.toml, setup.cfg and package.json.

(``setup(entry_points=...)`` in setup.py is read by the Python analyzer.)
"""

from __future__ import annotations

import configparser
import json
import posixpath
import re
import tomllib
from collections.abc import Iterable
from pathlib import Path

from kbc.analyzers.code.languages import code_module
from kbc.domain.models import EntryPoint

_SCRIPT_TABLES = (
    (("project", "scripts"), "console_script"),
    (("project", "gui-scripts"), "gui_script"),
    (("project", "entry-points", "console_scripts"), "console_script"),
    (("project", "entry-points", "gui_scripts"), "gui_script"),
    (("tool", "poetry", "scripts"), "console_script"),
)


def _line_of(text: str, key: str, json: bool = False) -> int:
    """The line ``key`` is set on: ``key = …`` at a line's start (TOML, INI), or ``"key": …``
    anywhere (JSON); 1 when it is not found."""
    pattern = (
        re.compile(rf'"{re.escape(key)}"\s*:')
        if json
        else re.compile(rf'^\s*["\']?{re.escape(key)}["\']?\s*=', re.MULTILINE)
    )
    match = pattern.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else 1


def _target(reference: str) -> str:
    """``pkg.mod:func`` (optionally with ``[extras]``) as ``pkg.mod.func``."""
    reference = reference.split("[", 1)[0].strip()
    return reference.replace(":", ".")


def _from_pyproject(path: str, text: str) -> tuple[list[EntryPoint], str]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return [], f"{path}: not valid TOML ({exc}); its scripts are not listed"
    found = []
    for keys, kind in _SCRIPT_TABLES:
        table: object = data
        for key in keys:
            table = table.get(key, {}) if isinstance(table, dict) else {}
        if not isinstance(table, dict):
            continue
        for name, reference in sorted(table.items()):
            if isinstance(reference, dict):  # poetry's {callable = "..."} form
                reference = reference.get("callable", "")
            if isinstance(reference, str) and reference:
                found.append(EntryPoint(kind, name, _target(reference), path, _line_of(text, name)))
    return found, ""


def _from_setup_cfg(path: str, text: str) -> tuple[list[EntryPoint], str]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        return [], f"{path}: cannot be read as setup.cfg ({type(exc).__name__}); its scripts are not listed"
    if not parser.has_section("options.entry_points"):
        return [], ""
    found = []
    for group, kind in (("console_scripts", "console_script"), ("gui_scripts", "gui_script")):
        raw = parser.get("options.entry_points", group, fallback="")
        for spec in raw.splitlines():
            if "=" in spec:
                name, _, reference = spec.partition("=")
                name = name.strip()
                found.append(EntryPoint(kind, name, _target(reference), path, _line_of(text, name)))
    return found, ""


def _from_package_json(path: str, text: str) -> tuple[list[EntryPoint], str]:
    """A Node package's commands (``bin``: the module of the file each runs) and its
    ``scripts`` (the command line each runs, as written)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        return [], f"{path}: not valid JSON ({exc}); its commands are not listed"
    if not isinstance(data, dict):
        return [], ""
    here = posixpath.dirname(path)
    found = []
    package = data.get("name") if isinstance(data.get("name"), str) else ""
    commands = data.get("bin")
    if isinstance(commands, str) and package:
        commands = {package.rsplit("/", 1)[-1]: commands}
    for name, file in sorted(commands.items()) if isinstance(commands, dict) else ():
        target = posixpath.normpath(posixpath.join(here, str(file)))
        if isinstance(file, str) and not target.startswith(".."):
            line = _line_of(text, name if f'"{name}"' in text else "bin", json=True)
            found.append(EntryPoint("npm_bin", name, code_module(target), path, line, detail=file))
    scripts = data.get("scripts")
    for name, command in sorted(scripts.items()) if isinstance(scripts, dict) else ():
        if isinstance(command, str):
            # what runs is a command line, written as the script gives it
            found.append(EntryPoint("npm_script", name, command[:200], path, _line_of(text, name, json=True)))
    return found, ""


def metadata_entry_points(root: Path, paths: Iterable[str]) -> tuple[list[EntryPoint], list[str]]:
    """Scripts declared by every pyproject.toml, setup.cfg and package.json among ``paths``;
    and problems."""
    found: list[EntryPoint] = []
    problems: list[str] = []
    for path in sorted(paths):
        name = posixpath.basename(path)
        readers = {
            "pyproject.toml": _from_pyproject,
            "setup.cfg": _from_setup_cfg,
            "package.json": _from_package_json,
        }
        if name not in readers:
            continue
        text = (root / path).read_text(encoding="utf-8", errors="replace")
        reader = readers[name]
        points, problem = reader(path, text)
        found.extend(points)
        if problem:
            problems.append(problem)
    return found, problems
