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
        super().__init__(f"{count} configuration error{'s' if count != 1 else ''}:\n{lines}")

    def __str__(self) -> str:
        return self.message


class TargetError(KbcError):
    """The repository to work on cannot be used (a missing path, an unreachable URL)."""

    exit_code = 5


class StoreError(KbcError):
    """The store is missing, from another version, or unreadable."""

    exit_code = 3


class IndexDamaged(StoreError):
    """The lexical index file cannot be read as a database."""


class LockTimeout(KbcError):
    """Another writer held the store's lock past ``refresh.lock_timeout``."""

    exit_code = 4


class NotFound(KbcError):
    """What was asked for by name (a view, a symbol) does not exist."""


class PathRefused(KbcError):
    """A path that may not be read or served: outside the repository, untracked, a link out,
    not a regular file, or holding a credential."""

    exit_code = 6


GOLDEN_HINT = (
    "each question needs `question` (text) and `paths` (a list of files); `lines` maps a "
    "path to [start, end], `symbols` lists qualified names; see docs/eval.md"
)


class GoldenError(KbcError):
    """A golden file that cannot be used, with every problem found in it."""

    exit_code = 2

    def __init__(self, source: str, problems: list[str], hint: str = GOLDEN_HINT) -> None:
        self.problems = tuple(problems)
        count = len(problems)
        body = "\n".join(f"  - {p}" for p in problems)
        super().__init__(
            f"{source}: {count} problem{'s' if count != 1 else ''} in the golden file:\n{body}", hint=hint
        )


class VectorStoreError(KbcError):
    """The vector store cannot be reached or used."""


class EmbedderUnavailable(KbcError):
    """The embedding model cannot be used; retrieval falls back to lexical search."""


class LLMError(KbcError):
    """An LLM call failed for good (after its retries); ``message`` says why in one line."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


# Every exit code a kbc command ends with, and what it means (the CLI's help lists these).
EXIT_CODES: dict[int, str] = {
    0: "done (or already up to date)",
    1: "failure",
    2: "configuration error (a setting, a profile, a golden file)",
    3: "unreadable store",
    4: "another writer held the store too long",
    5: "the target cannot be used (a missing path, an unreachable URL)",
    6: "a path refused (outside the repository, untracked, a link out, holding a credential)",
}


def exit_codes_text() -> str:
    """The exit codes as one line for a command's help."""
    return "Exit codes: " + ", ".join(f"{code} {meaning}" for code, meaning in EXIT_CODES.items()) + "."


DEBUG_HINT = (
    "re-run with `kbc --debug ...` for the traceback; the store keeps what the last finished build wrote"
)


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
    except Exception as exc:
        raise PassError(pass_name, describe(exc), path) from exc
