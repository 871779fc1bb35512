"""Use-case profiles: shipped in config/profiles.toml, overridable per repository."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields, replace
from importlib import resources
from pathlib import Path
from typing import Any

from kbc.analyzers.roles import INCIDENTAL
from kbc.domain.errors import ConfigError, FieldError
from kbc.domain.settings import config_files
from kbc.domain.views import VIEW_KINDS, view_kind_of


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    description: str
    budget: int
    code: float
    tests: float
    docs: float
    views: float
    config: float
    examples: float
    vendored: float
    graph: float
    view_kinds: tuple[str, ...] = VIEW_KINDS  # the kinds of view this use case retrieves
    cited: float = 0.0  # how strongly the code the best views cite is lifted (0: not followed)
    knowledge: float = -1.0  # team knowledge (a knowledge root's documents); below 0: as docs
    # generated, minified, message catalogs, data and locks (kbc.analyzers.roles.INCIDENTAL)
    incidental: float = 0.0

    def weight(self, kind: str, role: str, path: str = "") -> float:
        """How much a chunk of this kind and role weighs (see kbc.analyzers.roles); a view of
        a kind the profile leaves out (``path`` names it) weighs nothing."""
        if kind == "view":
            return self.views if not path or view_kind_of(path) in self.view_kinds else 0.0
        if kind == "knowledge":
            return self.knowledge if self.knowledge >= 0 else self.docs
        if role in INCIDENTAL:
            return self.incidental
        return {
            "test": self.tests,
            "doc": self.docs,
            "config": self.config,
            "example": self.examples,
            "vendored": self.vendored,
        }.get(role, self.code)


_NUMBERS = {f.name for f in fields(Profile)} - {"name", "description", "view_kinds"}
_OPTIONAL = {"cited", "knowledge", "incidental"}  # a new profile may leave these at their defaults


def shipped_profiles_text() -> str:
    packaged = resources.files("kbc").joinpath("_config/profiles.toml")
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    source = Path(__file__).resolve().parents[2] / "config" / "profiles.toml"
    return source.read_text(encoding="utf-8")


def _apply(
    base: dict[str, Profile], table: dict[str, Any], source: str, errors: list[FieldError]
) -> dict[str, Profile]:
    out = dict(base)
    for name, body in table.items():
        if not isinstance(body, dict):
            errors.append(
                FieldError(
                    source,
                    f"profiles.{name}",
                    "is not a table",
                    f"write [profiles.{name}] with budget, code, docs, ...",
                )
            )
            continue
        current = out.get(name)
        values: dict[str, Any] = {}
        for key, value in body.items():
            where = f"profiles.{name}.{key}"
            if key == "description" and isinstance(value, str):
                values[key] = value
            elif key == "view_kinds":
                if isinstance(value, list) and all(v in VIEW_KINDS for v in value):
                    values[key] = tuple(k for k in VIEW_KINDS if k in value)
                else:
                    errors.append(
                        FieldError(
                            source,
                            where,
                            f"{value!r} is not a list of view kinds",
                            f"list some of: {', '.join(VIEW_KINDS)}",
                        )
                    )
            elif key == "budget" and isinstance(value, int) and not isinstance(value, bool) and value > 0:
                values[key] = value
            elif (
                key in _NUMBERS - {"budget"}
                and isinstance(value, (int, float))
                and not isinstance(value, bool)
                and value >= 0
            ):
                values[key] = float(value)
            elif key not in _NUMBERS | {"description"}:
                known = sorted(_NUMBERS | {"description", "view_kinds"})
                errors.append(FieldError(source, where, "unknown field", f"use one of: {', '.join(known)}"))
            else:
                errors.append(
                    FieldError(
                        source,
                        where,
                        f"{value!r} is not valid",
                        "budget is a positive whole number; weights are numbers ≥ 0",
                    )
                )
        if current is None:
            missing = sorted(_NUMBERS - _OPTIONAL - set(values))
            if missing:
                errors.append(
                    FieldError(
                        source,
                        f"profiles.{name}",
                        f"a new profile lacks {', '.join(missing)}",
                        "give every field, or override an existing profile",
                    )
                )
                continue
            out[name] = Profile(name=name, description=values.pop("description", ""), **values)
        else:
            out[name] = replace(current, **values)
    return out


def load_profiles(root: Path | None = None) -> dict[str, Profile]:
    """Shipped profiles, overridden by the repository's kbc.toml / [tool.kbc.profiles]."""
    errors: list[FieldError] = []
    shipped = tomllib.loads(shipped_profiles_text())
    profiles = _apply({}, shipped, "config/profiles.toml", errors)
    if root is not None:
        for path in config_files(root):
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except (OSError, tomllib.TOMLDecodeError):
                continue  # reported by the settings loader
            if path.name == "pyproject.toml":
                data = data.get("tool", {}).get("kbc", {})
            table = data.get("profiles", {})
            if isinstance(table, dict):
                profiles = _apply(profiles, table, path.name, errors)
    if errors:
        raise ConfigError(errors)
    return profiles
