"""Bringing one repository of a workspace up to date: first what goes to the network (its clone
or fetch, and the knowledge roots it follows by URL), each within the git limits and on the
repository's own thread, so a remote that hangs holds up no other repository; then, one
repository at a time across the workspace, its work trees reset to what was fetched (without
going to the network again) and its build or refresh. A failure is kept as the repository's
problem (credentials masked), with when it is tried again."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from kbc.analyzers.gitrepo import Limits, as_fetched, fetch_remote, follow, without_password
from kbc.domain.errors import KbcError, TargetError
from kbc.domain.progress import Say
from kbc.domain.settings import Settings
from kbc.services.components import Components
from kbc.services.members import Member, store_of
from kbc.services.team import roots_to_read

TURN_POLL_SECONDS = 0.5  # how often a refresh waiting for its turn to build looks for the close


class Upkeep:
    """Refreshes the repositories of one workspace; ``halt`` stops the fetches under way and
    the builds not started (the workspace is closing)."""

    def __init__(
        self,
        settings: Settings,
        settings_for: Callable[[Path], Settings],
        components: Components,
        notify: Say,
    ) -> None:
        self.settings = settings  # the workspace's own: its data folder and git limits
        self._settings_for = settings_for
        self._components = components
        self._notify = notify
        self._building = threading.Lock()
        self.halt = threading.Event()

    def run(self, member: Member) -> None:
        """Bring ``member``'s store up to its repository (clone or fetch, then build or
        refresh) through a knowledge base of its own; never raises."""
        from kbc.services.refresh import refresh

        member.state = "refreshing"
        pushed = member.pushed
        try:
            cloned = bool(member.entry.url) and not member.root.is_dir()
            fetched = self._fetch(member)
            with self._turn(), as_fetched(fetched):
                if cloned:  # its own settings, read from the clone at its branch
                    follow(
                        member.entry.url, member.entry.branch, self.settings.data_dir, limits=self._limits()
                    )
                    self._configure(member)
                summary = refresh(
                    member.entry.url or str(member.root),
                    member.settings,
                    member.store if member.entry.store else None,
                    branch=member.entry.branch,
                    on_wait=self._notify,
                    components=self._components,
                )
        except KbcError as error:
            self._failed(member, error.message)
        except Exception as exc:
            self._failed(member, f"unexpected {type(exc).__name__}: {exc}")
        else:
            member.succeeded()
            if member.pushed == pushed:
                member.pushed = ""
            if summary.mode != "up-to-date":
                self._notify(f"kbc: {member.name}: refreshed ({summary.mode}: {summary.reason})")
        member.refreshed = time.monotonic()
        member.checked = None

    def _limits(self) -> Limits:
        return Limits.of(self.settings, self.halt)

    def _configure(self, member: Member) -> None:
        member.settings = self._settings_for(member.root)
        member.store = store_of(member.entry, member.root, member.settings)

    def _fetch(self, member: Member) -> dict[str, TargetError | None]:
        """Clone or fetch ``member`` (a URL) and the knowledge roots it follows by URL, their
        work trees untouched; returns each URL with the failure its fetch met (None: fetched).
        A failure of the repository's own is raised."""
        limits = self._limits()
        fetched: dict[str, TargetError | None] = {}
        if member.entry.url:
            cloned = not member.root.is_dir()
            fetch_remote(member.entry.url, member.entry.branch, self.settings.data_dir, limits=limits)
            fetched[member.entry.url] = None
            if cloned:  # which knowledge roots it follows is read from the clone
                self._configure(member)
        for root in roots_to_read(member.settings, member.store):
            if root.url and root.url not in fetched:
                try:
                    fetch_remote(root.url, root.branch, member.settings.data_dir, limits=limits)
                    fetched[root.url] = None
                except TargetError as error:
                    fetched[root.url] = error
        return fetched

    @contextmanager
    def _turn(self) -> Iterator[None]:
        """One build at a time across the workspace (builds share the machine's processes)."""
        while not self._building.acquire(timeout=TURN_POLL_SECONDS):
            if self.halt.is_set():
                raise KbcError("not built: the server is closing")
        try:
            if self.halt.is_set():
                raise KbcError("not built: the server is closing")
            yield
        finally:
            self._building.release()

    def _failed(self, member: Member, problem: str) -> None:
        member.failed(without_password(problem), time.monotonic())
        self._notify(
            f"kbc: {member.name}: refresh failed: {member.problem} "
            f"(tried again in {member.retry_at - time.monotonic():.0f} s)"
        )
