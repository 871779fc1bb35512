"""Proposals to the team's knowledge roots as one repository's knowledge base makes and reads
them: each a new branch of its root (never a write), read with the requests a configured forge
holds for them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from kbc.domain.settings import Settings
from kbc.services.components import Components
from kbc.services.drift import find_drift
from kbc.services.forge import Forge, forge_from
from kbc.services.team import Manifest
from kbc.views.llm import Interpreter

if TYPE_CHECKING:
    from kbc.services.proposals import Proposal


class Proposing:
    """What a knowledge base does with proposals; the store's manifest is read at each call.
    ``root`` and ``store``: the repository and its store, whose documents behind the code
    :meth:`propose_drift` proposes changes to."""

    def __init__(
        self,
        manifest: Callable[[], Manifest],
        settings: Settings,
        root: Path,
        store: Path,
        components: Components,
    ) -> None:
        self._manifest = manifest
        self._settings = settings
        self._root = root
        self._store = store
        self._components = components
        self._forge_made: tuple[Forge | None] | None = None

    def forge(self) -> Forge | None:
        """The configured forge, made once (it keeps the requests it has read for a while)."""
        if self._forge_made is None:
            self._forge_made = (forge_from(self._settings),)
        return self._forge_made[0]

    def propose(
        self, path: str, *, content: str | None = None, diff: str | None = None, rationale: str, author: str
    ) -> Proposal:
        """Propose a change to a knowledge document as a new branch of its root (never a write)."""
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

    def propose_drift(
        self, *, no_llm: bool = False, interpreter: Interpreter | None = None
    ) -> list[Proposal]:
        """A proposal for every document behind the code (``kbc drift --propose``): a skeleton, or
        with an LLM configured its grounded rewrite, marked as machine-written."""
        from kbc.services.drift_proposals import grounding, propose_drift

        chosen = None if no_llm else (interpreter or self._components.llm(self._settings))
        code = grounding(self._root, self._store) if chosen is not None else None
        manifest = self._manifest()
        return propose_drift(
            manifest, self._root, find_drift(self._root, self._store), chosen, code, self.forge()
        )

    def all(self, *, reviewed: bool = True) -> list[Proposal]:
        """Every proposal, newest first; ``reviewed``: the open ones with their requests as the
        configured forge has them (else as the knowledge roots' branches alone say)."""
        from kbc.services.proposals import proposals

        return proposals(self._manifest(), self.forge() if reviewed else None)

    def get(self, proposal_id: str) -> tuple[Proposal, str]:
        """One proposal and the diff it proposes."""
        from kbc.services.proposals import diff_of, find

        found = find(self._manifest(), proposal_id)
        return found, diff_of(self._manifest(), found)

    def close(self, proposal_id: str) -> Proposal:
        """Set a proposal aside (its branch kept under refs/kbc/closed/), and its request on the
        configured forge closed too."""
        from kbc.services.proposals import close

        return close(self._manifest(), proposal_id, self.forge())
