"""Go modules: the module path each ``go.mod`` of a repository declares, and the folder of the
repository an import path names by it.

``module github.com/x/y`` in ``go.mod`` makes ``import "github.com/x/y/pkg/z"`` the package in
the folder ``pkg/z`` beside that ``go.mod``. A repository may hold several modules (a nested
``go.mod`` starts a module of its own); an import belongs to the module whose path is its
longest prefix.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

GO_MOD = "go.mod"
_MAX_BYTES = 1 << 20  # a go.mod is a few kilobytes; a larger one is not read
_MODULE = re.compile(r'^\s*module\s+("(?P<quoted>[^"]+)"|(?P<plain>[^\s/][^\s]*))\s*(//.*)?$')


def module_path(written: str) -> str:
    """The module path a ``go.mod``'s text declares; "" when it declares none."""
    for line in written.splitlines():
        found = _MODULE.match(line)
        if found:
            return found.group("quoted") or found.group("plain") or ""
    return ""


def go_modules(root: Path, paths: Iterable[str]) -> dict[str, str]:
    """Folder of the repository ("" at its top) -> the module path its ``go.mod`` declares,
    for each ``go.mod`` among ``paths`` (relative to ``root``) that declares one; a file that
    cannot be read is left out."""
    found = {}
    for path in paths:
        if posixpath.basename(path) != GO_MOD:
            continue
        try:
            with (root / path).open("rb") as handle:
                data = handle.read(_MAX_BYTES + 1)
        except OSError:
            continue
        if len(data) > _MAX_BYTES:
            continue
        declared = module_path(data.decode("utf-8", errors="replace"))
        if declared:
            found[posixpath.dirname(path)] = declared
    return found


def package_folder(imported: str, modules: Mapping[str, str]) -> str | None:
    """The folder of the repository the import path ``imported`` names by the module paths of
    ``modules`` (folder -> module path), the longest module path first; None when it names
    no module of the repository."""
    best: tuple[int, str] | None = None
    for folder, declared in modules.items():
        if imported == declared or imported.startswith(declared + "/"):
            if best is None or len(declared) > best[0]:
                rest = imported[len(declared) :].strip("/")
                best = (len(declared), posixpath.join(folder, rest) if rest else folder)
    return best[1] if best is not None else None
