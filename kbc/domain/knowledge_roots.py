"""Knowledge roots as configured: ``[[knowledge]]`` tables, and ``[name=]path-or-url`` entries
(KBC_KNOWLEDGE, ``--knowledge``). Where a root may come from is the settings loader's rule."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kbc.domain.errors import FieldError
from kbc.domain.places import named_place, place_tables, tail_name


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
    return tail_name(where) or "knowledge"


KNOWLEDGE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def knowledge_root(entry: str, source: str, errors: list[FieldError]) -> KnowledgeRoot | None:
    """``[name=]path-or-url`` (KBC_KNOWLEDGE, --knowledge) as a root."""
    found = named_place(entry, source, "knowledge", errors)
    if found is None:
        return None
    name, path, url = found
    return _checked_root(KnowledgeRoot(name or _name_of(path or url), path, url), source, errors)


def _checked_root(root: KnowledgeRoot, source: str, errors: list[FieldError]) -> KnowledgeRoot | None:
    if not KNOWLEDGE_NAME.match(root.name):
        errors.append(
            FieldError(
                source,
                "knowledge.name",
                f"{root.name!r} is not a usable name",
                "use letters, digits, '.', '_' or '-' (it starts every path of the root)",
            )
        )
        return None
    return root


def knowledge_tables(data: Mapping[str, Any], source: str, errors: list[FieldError]) -> list[KnowledgeRoot]:
    """The ``[[knowledge]]`` tables of one configuration file."""
    found = []
    for values in place_tables(
        data, "knowledge", source, errors, keys=("path", "url", "branch", "name"), example="team-knowledge"
    ):
        where = values["path"] or values["url"]
        root = _checked_root(
            KnowledgeRoot(values["name"] or _name_of(where), values["path"], values["url"], values["branch"]),
            source,
            errors,
        )
        if root is not None:
            found.append(root)
    return found
