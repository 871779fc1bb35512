"""The repositories a workspace serves, as configured: ``[[repositories]]`` tables in the
user's own configuration, and ``[name=]path-or-url`` entries (``kbc serve --repo``).

A repository's own configuration never names other repositories: which repositories are
served, and where their clones and stores go, is the user's to decide.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kbc.domain.errors import FieldError
from kbc.domain.places import named_place, place_tables, tail_name

# A repository's name: what a request names it by. A monorepo's sub-project is <name>/<folder>.
REPOSITORY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}(/[A-Za-z0-9_.-]{1,64})*$")


@dataclass(frozen=True, slots=True)
class RepositoryEntry:
    """One repository of a workspace: a folder, or a git URL kbc clones and follows."""

    name: str
    path: str = ""  # a folder (absolute, or relative to where kbc runs)
    url: str = ""  # or a git repository to clone into kbc's data folder and follow
    branch: str = ""  # the branch followed ("": the remote's default)
    store: str = ""  # its store ("": <repository>/.kbc)
    projects: tuple[str, ...] = ()  # a monorepo's sub-projects: globs of folders, each served alone
    published: str = ""  # or a store published to object storage (s3://...), followed

    @property
    def where(self) -> str:
        return self.url or self.path or self.published


def is_published(where: str) -> bool:
    """Whether ``where`` names a published store (``s3://...``) rather than a repository."""
    return where.strip().lower().startswith("s3://")


def name_of(where: str) -> str:
    """A repository's default name: the last part of its path or URL, without ``.git``."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", tail_name(where)).strip("-.") or "repository"


def checked(entry: RepositoryEntry, source: str, errors: list[FieldError]) -> RepositoryEntry | None:
    if not REPOSITORY_NAME.match(entry.name):
        errors.append(
            FieldError(
                source,
                "repositories.name",
                f"{entry.name!r} is not a usable name",
                "use letters, digits, '.', '_' or '-' (requests name the repository by it)",
            )
        )
        return None
    return entry


def repository_entry(entry: str, source: str, errors: list[FieldError]) -> RepositoryEntry | None:
    """``[name=]path-or-url`` (``kbc serve --repo``) as a repository."""
    found = named_place(entry, source, "repo", errors)
    if found is None:
        return None
    name, path, url = found
    if is_published(url):
        return checked(RepositoryEntry(name or name_of(url), published=url.strip()), source, errors)
    return checked(RepositoryEntry(name or name_of(path or url), path, url), source, errors)


def repository_tables(
    data: Mapping[str, Any], source: str, errors: list[FieldError]
) -> list[RepositoryEntry]:
    """The ``[[repositories]]`` tables of the user's configuration."""
    found = []
    for values in place_tables(
        data,
        "repositories",
        source,
        errors,
        keys=("path", "url", "branch", "name", "store"),
        lists=("projects",),
        example="/src/app",
        alone=lambda table: is_published(str(table.get("store", ""))),
    ):
        where = values["path"] or values["url"] or values["store"]
        published = is_published(values["store"])
        entry = checked(
            RepositoryEntry(
                values["name"] or name_of(where),
                values["path"],
                values["url"],
                values["branch"],
                "" if published else values["store"],
                values["projects"],
                values["store"].strip() if published else "",
            ),
            source,
            errors,
        )
        if entry is not None:
            found.append(entry)
    return found
