"""Module qualified names from file paths (src layout, namespace packages).

A module's name is its path relative to the deepest *source root* that holds
it. Roots are the repository itself, every folder with a project file
(pyproject.toml, setup.py, setup.cfg) and every ``src`` folder that is not
itself a package, unless configuration names them. Folders without
``__init__.py`` below a root are namespace packages and still name modules.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence

PROJECT_FILES = frozenset({"pyproject.toml", "setup.py", "setup.cfg"})


def detect_source_roots(paths: Iterable[str], configured: Sequence[str] = ()) -> tuple[str, ...]:
    """Source roots as POSIX prefixes ("" for the repository root), deepest first."""
    if configured:
        roots = {r.strip("/") for r in configured} | {""}
    else:
        all_paths = list(paths)
        dirs_with_init = {posixpath.dirname(p) for p in all_paths if posixpath.basename(p) == "__init__.py"}
        roots = {""}
        for p in all_paths:
            directory, name = posixpath.split(p)
            if name in PROJECT_FILES:
                roots.add(directory)
            parts = directory.split("/") if directory else []
            for i, part in enumerate(parts):
                if part == "src":
                    candidate = "/".join(parts[: i + 1])
                    if candidate not in dirs_with_init:
                        roots.add(candidate)
    return tuple(sorted(roots, key=lambda r: (-r.count("/") - (1 if r else 0), r)))


def module_name(path: str, roots: Sequence[str]) -> tuple[str, bool]:
    """The dotted module name of ``path`` and whether it is a package's ``__init__``."""
    root = next((r for r in roots if not r or path.startswith(r + "/")), "")
    rel = path[len(root) + 1 :] if root else path
    stem, _ = posixpath.splitext(rel)
    parts = stem.split("/")
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


def resolve_relative(module: str, is_package: bool, level: int, name: str) -> str:
    """Absolute module of ``from <level dots><name> import ...`` in ``module``.

    Returns "" when the dots climb above the top-level package.
    """
    if level == 0:
        return name
    package = module if is_package else module.rpartition(".")[0]
    parts = package.split(".") if package else []
    up = level - 1
    if up > len(parts) or (not parts and not name):
        return ""
    base = parts[: len(parts) - up]
    if not base and not name:
        return ""
    return ".".join([*base, name] if name else base)
