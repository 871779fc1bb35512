"""Knowledge drift: Markdown documents that are behind the code they describe.

A document names the code it governs in a front-matter ``refs:`` list of globs
and mentions code in backticked spans; :mod:`kbc.analyzers.drift` checks both
against git history and the facts. Frozen, slotted dataclasses, serialised by
:mod:`kbc.domain.codec` like the other models.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

DriftKind = Literal["code_changed", "missing_symbols", "stale_ref", "bad_front_matter"]
DRIFT_KINDS: tuple[DriftKind, ...] = ("code_changed", "missing_symbols", "stale_ref", "bad_front_matter")


@dataclass(frozen=True, slots=True)
class DriftReason:
    """One way a document is behind; only the fields of its kind are filled."""

    kind: DriftKind
    detail: str  # one line for a reader: what is behind and by how much
    # code_changed: commits after the document's last commit (up to HEAD) that touched governed files,
    # the date (YYYY-MM-DD) of the latest of them, and the governed files they changed
    commits_since: int = 0
    last_change: str = ""
    files: tuple[str, ...] = ()
    # missing_symbols: the names as written in the body (without a trailing "()"), sorted
    names: tuple[str, ...] = ()
    # stale_ref: the front-matter globs that match no tracked file, in front-matter order
    refs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DriftReport:
    """A document that is behind the code, with every reason why."""

    path: str  # POSIX path of the Markdown document relative to the repository root
    reasons: tuple[DriftReason, ...]  # in the order of DRIFT_KINDS
    last_commit: str = ""  # the last commit that touched the document ("" when not committed)
    last_date: str = ""  # its date, YYYY-MM-DD

    def reason(self, kind: DriftKind) -> DriftReason | None:
        """The reason of ``kind``, if the document has it."""
        return next((r for r in self.reasons if r.kind == kind), None)
