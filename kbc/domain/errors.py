"""One error family for everything kbc reports to a user.

Each error says what happened and what to do; the CLI prints ``str(error)`` and
exits with ``error.exit_code``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
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


DEBUG_HINT = ("re-run with `kbc --debug ...` for the traceback; "
              "the store keeps what the last finished build wrote")


class PassError(KbcError):
    """An unexpected exception inside one pass of a build: named by the pass and, where
    known, the file it was working on. The original exception is chained for ``--debug``."""

    def __init__(self, pass_name: str, cause: str, path: str = "") -> None:
        self.pass_name = pass_name
        self.cause = cause
        self.path = path
        where = f" on {path}" if path else ""
        super().__init__(f"the {pass_name} pass failed{where}: {cause}", hint=DEBUG_HINT)

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})"  # one line

    def __reduce__(self) -> tuple[type[PassError], tuple[str, str, str]]:
        return type(self), (self.pass_name, self.cause, self.path)  # crosses process pools whole


def describe(exc: BaseException) -> str:
    """An exception as one short line: its type and the start of its message."""
    detail = " ".join(str(exc).split())
    if len(detail) > 200:
        detail = detail[:199] + "…"
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__


@contextmanager
def in_pass(pass_name: str, path: str = "") -> Iterator[None]:
    """Run a pass (or one file of it): an exception that is not a KbcError becomes a
    PassError naming both; a KbcError passes through as it is."""
    try:
        yield
    except KbcError:
        raise
    except Exception as exc:  # noqa: BLE001 - reported as one line, with the cause chained
        raise PassError(pass_name, describe(exc), path) from exc
