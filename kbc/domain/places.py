"""What ``[[knowledge]]`` and ``[[repositories]]`` tables share: a place that is a folder or a
git URL, a default name taken from it, and the checks every such table passes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kbc.domain.errors import FieldError


def looks_remote(where: str) -> bool:
    """Whether ``where`` is a git URL rather than a folder (``https://``, ``file://``, ``git@host:``)."""
    return "://" in where or (where.count(":") == 1 and "@" in where.split(":")[0])


def tail_name(where: str) -> str:
    """The last part of a path or URL, without ``.git``."""
    return where.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].removesuffix(".git")


def place_tables(
    data: Mapping[str, Any],
    section: str,
    source: str,
    errors: list[FieldError],
    *,
    keys: tuple[str, ...],
    lists: tuple[str, ...] = (),
    example: str,
    alone: Callable[[Mapping[str, Any]], bool] | None = None,
) -> list[dict[str, Any]]:
    """The ``[[section]]`` tables of one configuration file whose keys are ``keys`` (strings)
    and ``lists`` (lists of strings), each with exactly one of ``path`` and ``url`` (or, a
    table ``alone`` accepts, neither); a table that is not is reported in ``errors`` and left
    out."""
    tables = data.get(section, [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        errors.append(
            FieldError(
                source,
                section,
                "is not a list of tables",
                f'write [[{section}]] tables with path = "..." or url = "..."',
            )
        )
        return []
    found = []
    for table in tables:
        unknown = sorted(set(table) - set(keys) - set(lists))
        values: dict[str, Any] = {k: table.get(k, "") for k in keys}
        listed = {k: table.get(k, []) for k in lists}
        if (
            unknown
            or not all(isinstance(v, str) for v in values.values())
            or not all(isinstance(v, list) and all(isinstance(p, str) for p in v) for v in listed.values())
        ):
            errors.append(
                FieldError(
                    source,
                    section,
                    f"a table has unknown keys {unknown} or a value of the wrong type",
                    f"use path or url, and {', '.join(keys[2:])} (strings)"
                    + "".join(f" and {k} (a list of strings)" for k in lists),
                )
            )
            continue
        if alone is not None and alone(table):
            if values["path"] or values["url"]:
                errors.append(
                    FieldError(
                        source,
                        section,
                        "a table of a published store names a path or url too",
                        "drop path and url: the store is read from where it is published",
                    )
                )
                continue
        elif bool(values["path"]) == bool(values["url"]):
            errors.append(
                FieldError(
                    source,
                    section,
                    "a table needs exactly one of path and url",
                    f'write path = "{example}" or url = "https://..."',
                )
            )
            continue
        found.append({**values, **{k: tuple(v) for k, v in listed.items()}})
    return found


def named_place(entry: str, source: str, key: str, errors: list[FieldError]) -> tuple[str, str, str] | None:
    """``[name=]path-or-url`` (a flag's or a variable's) as (name or "", path, url)."""
    name, equals, where = entry.strip().partition("=")
    if not equals or "/" in name or ":" in name:
        name, where = "", entry.strip()
    where = where.strip()
    if not where:
        errors.append(
            FieldError(
                source, key, "names no folder or URL", "give a path or a git URL, optionally as name=path"
            )
        )
        return None
    return (name.strip(), "", where) if looks_remote(where) else (name.strip(), where, "")


def is_loopback(host: str) -> bool:
    """True for localhost, 127.0.0.0/8 and ::1 (bracketed or not)."""
    import ipaddress

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
