"""One error family for everything kbc reports to a user.

Each error says what happened and what to do; the CLI prints ``str(error)`` and
exits with ``error.exit_code``.
"""

from __future__ import annotations

from dataclasses import dataclass


class KbcError(Exception):
    """Base of kbc's errors: a message and a hint on what to do."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n  → {self.hint}" if self.hint else self.message


@dataclass(frozen=True, slots=True)
class FieldError:
    source: str  # where the value came from: "kbc.toml", "KBC_WORKERS", "--workers", ...
    field: str  # dotted setting name
    problem: str
    fix: str

    def render(self) -> str:
        return f"{self.source}: {self.field}: {self.problem} → {self.fix}"


class ConfigError(KbcError):
    """Every bad configuration field, reported at once."""

    exit_code = 2

    def __init__(self, errors: list[FieldError]) -> None:
        self.errors = tuple(errors)
        lines = "\n".join(f"  - {e.render()}" for e in self.errors)
        count = len(self.errors)
        super().__init__(
            f"{count} configuration error{'s' if count != 1 else ''}:\n{lines}",
        )

    def __str__(self) -> str:
        return self.message


class TargetError(KbcError):
    """The repository to work on cannot be used (a missing path, an unreachable URL)."""

    exit_code = 5


class StoreError(KbcError):
    """The store is missing, from another version, or unreadable."""

    exit_code = 3
