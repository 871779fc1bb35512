"""Knowledge roots as configured: ``[[knowledge]]`` tables, and ``[name=]path-or-url`` entries
(KBC_KNOWLEDGE, ``--knowledge``). Where a root may come from is the settings loader's rule."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kbc.domain.errors import FieldError


@dataclass(frozen=True, slots=True)
class KnowledgeRoot:
    """A folder or repository of team knowledge (Markdown) indexed beside the code."""

    name: str  # what its documents' paths start with: @knowledge/<name>/...
    path: str = ""  # a folder: relative to the repository, or absolute
    url: str = ""  # or a git repository to clone and follow
    branch: str = ""  # the branch followed ("" : the remote's default, or the work tree's HEAD)

    @property
    def where(self) -> str:
        return self.url or self.path


def _name_of(where: str) -> str:
    tail = where.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    return tail.removesuffix(".git") or "knowledge"


KNOWLEDGE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def knowledge_root(entry: str, source: str, errors: list[FieldError]) -> KnowledgeRoot | None:
    """``[name=]path-or-url`` (KBC_KNOWLEDGE, --knowledge) as a root."""
    name, equals, where = entry.strip().partition("=")
    if not equals or "/" in name or ":" in name:
        name, where = "", entry.strip()
    if not where:
        errors.append(FieldError(source, "knowledge", "names no folder or URL",
                                 "give a path or a git URL, optionally as name=path"))
        return None
    return _checked_root(KnowledgeRoot(name.strip() or _name_of(where), *_place(where)), source, errors)


def _place(where: str) -> tuple[str, str]:
    """(path, url) of a knowledge root's location."""
    looks_remote = "://" in where or (where.count(":") == 1 and "@" in where.split(":")[0])
    return ("", where) if looks_remote else (where, "")


def _checked_root(root: KnowledgeRoot, source: str, errors: list[FieldError]) -> KnowledgeRoot | None:
    if not KNOWLEDGE_NAME.match(root.name):
        errors.append(FieldError(source, "knowledge.name", f"{root.name!r} is not a usable name",
                                 "use letters, digits, '.', '_' or '-' (it starts every path of the root)"))
        return None
    return root


def knowledge_tables(data: Mapping[str, Any], source: str, errors: list[FieldError]
                      ) -> list[KnowledgeRoot]:
    """The ``[[knowledge]]`` tables of one configuration file."""
    tables = data.get("knowledge", [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        errors.append(FieldError(source, "knowledge", "is not a list of tables",
                                 'write [[knowledge]] tables with path = "..." or url = "..."'))
        return []
    found = []
    for table in tables:
        unknown = sorted(set(table) - {"path", "url", "branch", "name"})
        values = {k: table.get(k, "") for k in ("path", "url", "branch", "name")}
        if unknown or not all(isinstance(v, str) for v in values.values()):
            errors.append(FieldError(source, "knowledge", f"a table has unknown keys {unknown} or a value "
                                     "that is not a string", "use path or url, and branch and name"))
            continue
        if bool(values["path"]) == bool(values["url"]):
            errors.append(FieldError(source, "knowledge", "a table needs exactly one of path and url",
                                     'write path = "team-knowledge" or url = "https://..."'))
            continue
        where = values["path"] or values["url"]
        root = _checked_root(KnowledgeRoot(values["name"] or _name_of(where), values["path"], values["url"],
                                           values["branch"]), source, errors)
        if root is not None:
            found.append(root)
    return found
