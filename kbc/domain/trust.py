"""What a repository's own configuration may decide, and what the user trusts it with.

A repository is untrusted input: its configuration may say how it is read, never where
data, code or credentials go nor what the machine spends (:mod:`kbc.domain.settings`
marks those fields). The user lists the repositories trusted in full; a repository's own
paths (its store, its knowledge roots) must stay inside it, and its store may take only a
folder of its own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kbc.domain.errors import FieldError


def trusted_repositories(
    data: Mapping[str, Any], source: str, env: Mapping[str, str], errors: list[FieldError]
) -> set[Path]:
    """The repositories whose own configuration the user trusts in full."""
    listed: list[str] = []
    trust = data.get("trust", {})
    if (
        not isinstance(trust, dict)
        or not isinstance(trust.get("repositories", []), list)
        or not all(isinstance(p, str) for p in trust.get("repositories", []))
    ):
        errors.append(
            FieldError(
                source,
                "trust.repositories",
                "is not a list of folders",
                'write repositories = ["/path/to/repo"]',
            )
        )
    else:
        listed.extend(trust.get("repositories", []))
    listed.extend(p for p in env.get("KBC_TRUST_REPOSITORIES", "").split(os.pathsep) if p.strip())
    return {Path(p.strip()).expanduser().resolve() for p in listed}


def inside(root: Path, value: str) -> bool:
    """``value`` is a relative path that stays inside ``root`` once resolved."""
    candidate = Path(value)
    if not value or candidate.is_absolute() or value.startswith("~"):
        return False
    base = root.resolve()
    return (base / candidate).resolve().is_relative_to(base)


STORE_MARK = "# kbc's store"  # the first words of the .gitignore kbc writes into a store folder


def own_folder(root: Path, value: str) -> bool:
    """``value`` (inside ``root``) names a folder a store may take: not the repository itself
    nor inside ``.git``, and new, empty, or already a kbc store."""
    base = root.resolve()
    folder = (base / value).resolve()
    if folder == base or ".git" in folder.relative_to(base).parts:
        return False
    if not folder.exists():
        return True
    if not folder.is_dir():
        return False
    ignore = folder / ".gitignore"
    try:
        if ignore.is_file() and ignore.read_text(encoding="utf-8", errors="replace").startswith(STORE_MARK):
            return True
        return not any(folder.iterdir())
    except OSError:
        return False
