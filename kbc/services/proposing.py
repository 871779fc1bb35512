"""Proposals to the team's knowledge roots as one repository's knowledge base makes and reads
them: each a new branch of its root (never a write), read with the requests a configured forge
holds for them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kbc.domain.settings import Settings
from kbc.services.forge import Forge, forge_from
from kbc.services.team import Manifest

if TYPE_CHECKING:
    from kbc.services.proposals import Proposal


class Proposing:
    """What a knowledge base does with proposals; the store's manifest is read at each call."""

    def __init__(self, manifest: Callable[[], Manifest], settings: Settings) -> None:
        self._manifest = manifest
        self._settings = settings
        self._forge_made: tuple[Forge | None] | None = None

    def forge(self) -> Forge | None:
        """The configured forge, made once (it keeps the requests it has read for a while)."""
        if self._forge_made is None:
            self._forge_made = (forge_from(self._settings),)
        return self._forge_made[0]

    def propose(
        self, path: str, *, content: str | None, diff: str | None, rationale: str, author: str
    ) -> Proposal:
        from kbc.services.proposals import propose

        return propose(
            self._manifest(),
            path,
            content=content,
            diff=diff,
            rationale=rationale,
            author=author,
            forge=self.forge(),
        )

    def proposals(self, *, reviewed: bool) -> list[Proposal]:
        from kbc.services.proposals import proposals

        return proposals(self._manifest(), self.forge() if reviewed else None)

    def proposal(self, proposal_id: str) -> tuple[Proposal, str]:
        from kbc.services.proposals import diff_of, find

        found = find(self._manifest(), proposal_id)
        return found, diff_of(self._manifest(), found)

    def close(self, proposal_id: str) -> Proposal:
        from kbc.services.proposals import close

        return close(self._manifest(), proposal_id, self.forge())
