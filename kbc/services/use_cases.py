"""A repository's use cases (the retrieval profiles), read again only when its configuration
files change."""

from __future__ import annotations

from pathlib import Path

from kbc.domain.errors import KbcError
from kbc.domain.settings import config_files
from kbc.retrieval.profiles import Profile, load_profiles


class UseCases:
    """The use cases of the repository at ``root``."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._profiles: tuple[tuple[tuple[str, int, int], ...], dict[str, Profile]] | None = None

    def all(self) -> dict[str, Profile]:
        """Every profile by name, read again only when the repository's configuration files change."""
        marks = []
        for path in config_files(self._root):
            try:
                found = path.stat()
            except OSError:
                continue
            marks.append((str(path), found.st_mtime_ns, found.st_size))
        key = tuple(marks)
        cached = self._profiles
        if cached is not None and cached[0] == key:
            return dict(cached[1])
        profiles = load_profiles(self._root)
        self._profiles = (key, profiles)
        return dict(profiles)

    def named(self, name: str) -> Profile:
        profiles = self.all()
        if name not in profiles:
            raise KbcError(f"no use case named {name!r}", hint=f"use one of: {', '.join(sorted(profiles))}")
        return profiles[name]
