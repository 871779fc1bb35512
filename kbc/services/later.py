"""What the background process after a build does: the passes a first index waits for, then
the vectors (`kbc embed`, :mod:`kbc.services.embedding`; the first index is
:mod:`kbc.services.first`'s)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from kbc.domain.settings import Settings
from kbc.services.build import build_repository
from kbc.services.components import CONFIGURED, Components
from kbc.services.embedding import FillSummary, fill_vectors, waits_for_facts
from kbc.services.first import NO_LLM
from kbc.store.layout import store_path


def fill_in(
    root: Path,
    settings: Settings,
    store_dir: Path | None = None,
    *,
    background: bool = False,
    lock: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    on_wait: Callable[[str], None] | None = None,
    components: Components = CONFIGURED,
) -> FillSummary:
    """Run the build a first index waits for, if it waits for one (its facts, views, team
    knowledge, the index cut at the facts' definitions, with or without the LLM as the build
    that published it), then embed the units left (:func:`fill_vectors`), all holding the
    fill lock: `kbc status` shows the passes running until the vectors are in."""
    store_root = store_path(root, settings, store_dir)

    def facts() -> None:
        later = waits_for_facts(store_root)
        if later:
            build_repository(
                root,
                settings,
                store_dir,
                no_llm=NO_LLM in later.split(),
                on_wait=on_wait,
                components=components,
                wait=False,
                start=False,
            )

    return fill_vectors(
        root,
        settings,
        store_dir,
        background=background,
        lock=lock,
        progress=progress,
        on_wait=on_wait,
        components=components,
        before=facts,
    )


STOPPED_AFTER = 3  # polls in a row that find the fill lock free: the process after the build stopped


def await_facts(store_root: Path, on_wait: Callable[[str], None], timeout: float, poll: float = 0.5) -> None:
    """Return once the store holds facts: at once unless its live index is a first index, whose
    facts the process after the build is reading; then wait for them, saying so, up to
    ``timeout`` seconds. A process that stopped, or a wait past the timeout, is an error that
    says how to get the facts."""
    from kbc.domain.errors import KbcError
    from kbc.store.facts_store import POINTER
    from kbc.store.lock import filling

    stopped = KbcError(
        "the facts of this first index were left unread: the process reading them after the build stopped",
        hint="run `kbc refresh` to read them",
    )
    deadline = time.monotonic() + timeout
    said, unheld = False, 0
    while True:
        # whether the process is alive is read before whether the facts are in: a process that
        # publishes them and ends between the two reads is never taken for one that stopped;
        # the lock is found free STOPPED_AFTER times in a row before the process is taken for
        # stopped (a process waiting for the lock, as it is handed over, does not hold it); and
        # an index read while it is replaced says nothing: the facts' own pointer decides
        alive = filling(store_root)
        if not waits_for_facts(store_root) and ((store_root / POINTER).is_file() or not alive):
            return  # the facts are in, or no first index waits for them (its own error follows)
        unheld = 0 if alive else unheld + 1
        if unheld >= STOPPED_AFTER:
            raise stopped
        if not said:
            on_wait(
                "waiting for the facts the process after the first build is reading (`kbc status` follows it)"
            )
            said = True
        if time.monotonic() > deadline:
            raise KbcError(
                f"the facts of this first index were not in after {timeout:.0f} s",
                hint="`kbc status` follows the process reading them; `kbc embed` waits for it",
            )
        time.sleep(poll)
