"""A workspace: many repositories served by one process, each with its own store (or a
store published to object storage, followed: :mod:`kbc.services.published`).

Stores open on first use and close when idle (or when more than ``serve.max_open`` are
open: the one used least recently goes first); a repository without a build is built in
the background on first use. URL repositories (and every repository's knowledge roots)
are fetched and refreshed on a schedule (``serve.fetch_seconds``) and on a push webhook.
Each repository's refresh runs on a thread of its own: its clone or fetch within the git
limits, beside the others', then its build, one build at a time (:mod:`kbc.services.upkeep`),
each through a knowledge base of its own, so queries keep reading the previous build until the
new one is complete, and a slow remote or refresh of one repository never holds up the others.
A refresh that failed is tried again on use or on schedule only after a wait that doubles with
each failure; asked for by name (the refresh tool, a push webhook), at once.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kbc.analyzers.gitrepo import checkout_path, git
from kbc.domain.errors import KbcError, NotFound, StoreError
from kbc.domain.progress import Say
from kbc.domain.settings import Settings
from kbc.domain.workspace import RepositoryEntry, name_of
from kbc.services.components import CONFIGURED, Components
from kbc.services.fused_ids import FusedIds, Parts
from kbc.services.knowledge import KnowledgeBase
from kbc.services.listing import clock, described
from kbc.services.members import Member, expand, follows_knowledge, same_url, store_of
from kbc.services.published import Followed, Publications
from kbc.services.querylog import Listener
from kbc.services.upkeep import Upkeep

SettingsFor = Callable[[Path], Settings]
IDLE_CHECK_SECONDS = 30.0  # how often the follower looks for stores idle past serve.idle_seconds
STOP_SECONDS = 5.0  # how long closing waits for the refreshes under way
BEHIND_SECONDS = 5.0  # how long an answer trusts "behind or not" before asking git again
NAME_SHOWN = 100  # characters of an unknown repository name an error repeats


@dataclass(slots=True)
class _Queue:
    names: deque[str] = field(default_factory=deque)
    wake: threading.Condition = field(default_factory=threading.Condition)
    stopping: bool = False


class Workspace:
    """The repositories one server answers for, by name."""

    def __init__(
        self,
        entries: Sequence[RepositoryEntry],
        settings: Settings,
        *,
        settings_for: SettingsFor | None = None,
        components: Components = CONFIGURED,
        notify: Say | None = None,
        opened: dict[str, KnowledgeBase] | None = None,
    ) -> None:
        """``settings`` are the workspace's own (the user's: its limits and schedule);
        ``settings_for(root)`` gives each repository's (by default ``settings``);
        ``opened`` maps names to knowledge bases already open (kept open until :meth:`close`)."""
        if not entries:
            raise KbcError(
                "a workspace needs at least one repository",
                hint="give --repo PATH-OR-URL, or [[repositories]] in your configuration",
            )
        self.settings = settings
        self.components = components
        self._notify = notify or (lambda _message: None)
        self._settings_for = settings_for or (lambda _root: settings)
        self._lock = threading.RLock()
        self._members: dict[str, Member] = {}
        self._listeners: list[Listener] = []
        self._queue = _Queue()
        self._thread: threading.Thread | None = None
        self._workers: dict[str, threading.Thread] = {}  # the refresh under way of each repository
        self._upkeep = Upkeep(settings, self._settings_for, components, self._notify)
        self._fused = FusedIds()
        self._lent: dict[int, int] = {}  # requests under way per knowledge base (by id)
        self._retired: dict[int, KnowledgeBase] = {}  # replaced, closed once no request uses them
        opened = opened or {}
        for entry in expand(entries):
            if entry.published:
                followed = Followed(entry, settings.data_dir)
                own = dataclasses.replace(settings, auto_refresh=False)
                self._members[entry.name] = Member(
                    entry, followed.root, own, followed.start(), followed=followed
                )
                continue
            given = opened.get(entry.name)
            if given is not None:
                self._members[entry.name] = Member(
                    entry, given.root, given.settings, given.store, pinned=given, kb=given
                )
                continue
            root = (
                checkout_path(entry.url, settings.data_dir)
                if entry.url
                else Path(entry.path).expanduser().resolve()
            )
            own = self._settings_for(root)
            self._members[entry.name] = Member(entry, root, own, store_of(entry, root, own))
        self._publications = Publications(
            {m.name: m.followed for m in self._members.values() if m.followed is not None},
            settings.publication_poll,
            self.switch,
            self._reported,
        )

    @classmethod
    def of(cls, kb: KnowledgeBase, name: str = "") -> Workspace:
        """A workspace of one knowledge base already open (what ``kbc serve`` of one repository
        serves)."""
        name = name or name_of(kb.root.name)
        return cls(
            [RepositoryEntry(name, str(kb.root))], kb.settings, components=kb.components, opened={name: kb}
        )

    # -- naming ----------------------------------------------------------------

    def names(self) -> list[str]:
        return list(self._members)

    def single(self) -> str | None:
        """The one repository's name, when there is only one."""
        return next(iter(self._members)) if len(self._members) == 1 else None

    def member(self, name: str) -> Member:
        found = self._members.get(name)
        if found is None:
            shown = name if len(name) <= NAME_SHOWN else name[:NAME_SHOWN] + "…"
            raise NotFound(
                f"no repository named {shown!r}",
                hint=f"use one of: {', '.join(self._members)} (GET /api/v1/repositories, "
                "MCP list_repositories)",
            )
        return found

    def chosen(self, repository: str | None) -> str:
        """The repository a request that reads one repository works on: the one it names, else
        the only one."""
        if repository:
            return self.member(repository).name
        only = self.single()
        if only is None:
            raise KbcError(
                "this server serves several repositories: name one",
                hint=f"add repository (one of: {', '.join(self._members)})",
            )
        return only

    def listen(self, listener: Listener) -> None:
        """Call ``listener`` after every query logged in any repository."""
        with self._lock:
            self._listeners.append(listener)
            for member in self._members.values():
                if member.kb is not None:
                    member.kb.queries.listen(listener)

    # -- opening and closing ---------------------------------------------------

    @contextmanager
    def using(self, name: str) -> Iterator[KnowledgeBase]:
        """The repository's knowledge base, opened if it is not (a repository without a build
        gets one queued, and the request is told to come back)."""
        with self._lock:
            member = self.member(name)
            if member.kb is None:
                if member.followed is not None and not member.built():
                    raise StoreError(
                        f"repository {name!r} has no publication pulled yet "
                        f"({member.problem or 'the first pull is under way'})",
                        hint="ask again once GET /api/v1/repositories (MCP list_repositories) shows it ready",
                    )
                if not member.built():
                    if member.backing_off(time.monotonic()):
                        raise StoreError(
                            f"repository {name!r} failed to build ({member.problem}); it is retried "
                            f"after {clock(member.retry_at)}",
                            hint="MCP refresh (or a push webhook) tries again at once; "
                            "GET /api/v1/repositories (MCP list_repositories) shows its status",
                        )
                    self.enqueue(name)
                    state = "is being built" if member.state in ("queued", "refreshing") else "has no build"
                    raise StoreError(
                        f"repository {name!r} {state} ({member.problem or 'first use'})",
                        hint="ask again once GET /api/v1/repositories (MCP list_repositories) shows it ready",
                    )
                member.kb = KnowledgeBase(
                    member.root,
                    store=member.store,
                    settings=member.settings,
                    notify=self._notify,
                    components=self.components,
                )
                for listener in self._listeners:
                    member.kb.queries.listen(listener)
                self._evict(keep=name)
            member.users += 1
            kb = member.kb
            self._lent[id(kb)] = self._lent.get(id(kb), 0) + 1
        try:
            yield kb
        finally:
            with self._lock:
                member.users -= 1
                member.last_used = time.monotonic()
                self._lent[id(kb)] -= 1
                if not self._lent[id(kb)]:
                    del self._lent[id(kb)]
                    if id(kb) in self._retired:
                        self._retired.pop(id(kb)).close()

    def switch(self, name: str, store: Path) -> None:
        """Serve ``name`` from ``store`` (a newer publication), opened first, then swapped in;
        the store it replaces is closed once its requests are done."""
        member = self.member(name)
        kb = KnowledgeBase(
            member.root,
            store=store,
            settings=member.settings,
            notify=self._notify,
            components=self.components,
        )
        try:
            kb.served.retriever()  # what the first request would open, opened before the swap
        except BaseException:
            kb.close()
            raise
        with self._lock:
            for listener in self._listeners:
                kb.queries.listen(listener)
            old, member.kb, member.store = member.kb, kb, store
            if old is not None and self._lent.get(id(old)):
                self._retired[id(old)] = old
            elif old is not None:
                old.close()
        self._notify(f"kbc: {name}: serving {store.name}")

    def followed(self) -> dict[str, Followed]:  # the published stores, by name
        return self._publications.followed

    def _reported(self, name: str, problem: str) -> None:
        member = self.member(name)
        member.problem = problem
        member.state = "failed" if problem and not member.built() else "idle"

    def _open(self) -> list[Member]:
        return [m for m in self._members.values() if m.kb is not None and m.pinned is None]

    def _evict(self, keep: str) -> None:
        """Close the least recently used stores beyond ``serve.max_open`` (none in use)."""
        opened = sorted(self._open(), key=lambda m: m.last_used)
        excess = len(opened) - self.settings.max_open
        for member in opened:
            if excess <= 0:
                break
            if member.name != keep and member.users == 0:
                self._close(member)
                excess -= 1

    def close_idle(self, now: float | None = None) -> list[str]:
        """Close the stores unused for ``serve.idle_seconds``; returns their names."""
        if self.settings.idle_seconds <= 0:
            return []
        now = time.monotonic() if now is None else now
        closed = []
        with self._lock:
            for member in self._open():
                if member.users == 0 and now - member.last_used >= self.settings.idle_seconds:
                    self._close(member)
                    closed.append(member.name)
        return closed

    def _close(self, member: Member) -> None:
        kb, member.kb = member.kb, None
        if kb is not None:
            kb.close()

    def open_stores(self) -> list[tuple[str, KnowledgeBase]]:
        """The repositories whose stores are open now, by name (what the metrics read)."""
        with self._lock:
            return [(m.name, m.kb) for m in self._members.values() if m.kb is not None]

    def open_count(self) -> int:
        with self._lock:
            return sum(1 for m in self._members.values() if m.kb is not None)

    # -- what each repository is -----------------------------------------------

    def listing(self) -> list[dict[str, Any]]:
        """Every repository: name, path or URL, branch, the commit served, when it was built,
        status, and whether its store is behind its work tree or remote."""
        with self._lock:
            members = list(self._members.values())
        return [self.describe(m) for m in members]

    def describe(self, member: Member) -> dict[str, Any]:
        return described(member)

    def behind(self, names: Sequence[str]) -> list[str]:
        """Which of ``names`` serve a store behind their repository (looked up at most every
        few seconds: an answer need not run git each time)."""
        now = time.monotonic()
        found = []
        for name in names:
            member = self.member(name)
            if member.checked is None or now - member.checked[0] > BEHIND_SECONDS:
                member.checked = (now, bool(self.describe(member)["behind"]))
            if member.checked[1]:
                found.append(name)
        return found

    # -- following -------------------------------------------------------------

    def enqueue(self, name: str, pushed: str = "") -> bool:
        """Queue a refresh of ``name`` (a build when it has none); False when one is queued."""
        member = self.member(name)
        with self._queue.wake:
            if pushed:
                member.pushed = pushed
            member.checked = None
            if name in self._queue.names:
                return False
            self._queue.names.append(name)
            if member.state != "refreshing":
                member.state = "queued"
            self._queue.wake.notify_all()
        return True

    def start(self) -> None:
        """Follow the repositories in the background: queued refreshes, each repository's on a
        thread of its own, and the scheduled fetch every ``serve.fetch_seconds``."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._follow, name="kbc-follow", daemon=True)
            self._thread.start()
            self._publications.start()

    def _follow(self) -> None:
        every = self.settings.fetch_seconds
        due = time.monotonic() + every if every > 0 else float("inf")
        while True:
            with self._queue.wake:
                if not self._startable() and not self._queue.stopping:
                    self._queue.wake.wait(max(0.0, min(due - time.monotonic(), IDLE_CHECK_SECONDS)))
                if self._queue.stopping:
                    return
                for name in self._startable():
                    self._queue.names.remove(name)
                    self.member(name).state = "refreshing"
                    worker = threading.Thread(
                        target=self._work, args=(name,), name=f"kbc-refresh-{name}", daemon=True
                    )
                    self._workers[name] = worker
                    worker.start()
            if time.monotonic() >= due:
                due = time.monotonic() + every
                for scheduled in self.scheduled():
                    self.enqueue(scheduled)
            self.close_idle()

    def _startable(self) -> list[str]:
        """The repositories queued whose refresh is not under way already."""
        return [name for name in self._queue.names if name not in self._workers]

    def _work(self, name: str) -> None:
        try:
            self.refresh_now(name)
        finally:
            with self._queue.wake:
                del self._workers[name]
                if name in self._queue.names:  # queued again meanwhile: its turn comes next
                    self.member(name).state = "queued"
                self._queue.wake.notify_all()

    def scheduled(self) -> list[str]:
        """What the schedule refreshes: URL repositories, and built ones with a knowledge root
        followed by URL (a folder's own commits are its owner's to build: the listing says
        when its store is behind), but those whose failed refresh is not to be tried again yet."""
        now = time.monotonic()
        return [
            m.name
            for m in self._members.values()
            if (m.entry.url or (m.built() and any(root.url for root in m.settings.knowledge)))
            and not m.backing_off(now)
            and m.followed is None
        ]

    def refresh_now(self, name: str) -> None:
        """Bring ``name``'s store up to its repository (clone, fetch, build or refresh), through a
        knowledge base of its own; a failure is kept as the repository's problem. A published
        store: its newest publication, pulled and served."""
        member = self.member(name)
        if member.followed is not None:
            self._publications.look(name)
            return
        self._upkeep.run(member)

    def pushed_to(self, urls: Sequence[str], branch: str, after: str) -> list[str]:
        """Queue a refresh of every URL repository at one of ``urls`` following ``branch``
        (a push webhook's), and of every repository one of whose knowledge roots follows it;
        returns their names."""
        wanted = {same_url(u) for u in urls if u}
        queued = []
        for member in self._members.values():
            if follows_knowledge(member, wanted, branch):
                self.enqueue(member.name)
                queued.append(member.name)
                continue
            if not member.entry.url or same_url(member.entry.url) not in wanted:
                continue
            followed = member.entry.branch
            if not followed and member.root.is_dir():
                followed = git(member.root, "symbolic-ref", "--short", "HEAD", check=False).strip()
            if branch and followed and branch != followed:
                continue
            self.enqueue(member.name, pushed=after)
            queued.append(member.name)
        return queued

    def wait_for(self, name: str, seconds: float) -> bool:
        """Wait until ``name`` has no refresh queued or running (or ``seconds`` pass); True when
        it has none. Without a follower started, the refresh runs here."""
        member = self.member(name)
        if self._thread is None:
            with self._queue.wake:
                queued = name in self._queue.names
                if queued:
                    self._queue.names.remove(name)
            if queued:
                self.refresh_now(name)
            return True
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with self._queue.wake:
                if name not in self._queue.names and member.state not in ("queued", "refreshing"):
                    return True
            time.sleep(0.1)
        return False

    def waiting(self) -> int:
        """Refreshes queued or running."""
        with self._queue.wake:
            return len(self._queue.names) + sum(1 for m in self._members.values() if m.state == "refreshing")

    def idle(self) -> bool:
        """Nothing queued or refreshing."""
        with self._queue.wake:
            return not self._queue.names and all(m.state != "refreshing" for m in self._members.values())

    # -- cross-repository query ids --------------------------------------------

    def remember(self, query_id: str, parts: Parts) -> None:
        """A fused query's id, and each repository's own (name, query id, item ids)."""
        self._fused.remember(query_id, parts)

    def report_usage(self, query_id: str, helpful_ids: list[str], repository: str | None = None) -> bool:
        """Which items of a query helped, told to the repository that answered it (each of them,
        for a query across repositories)."""
        parts = self._fused.parts_of(query_id)
        if parts is None:
            with self.using(self.chosen(repository)) as kb:
                return kb.queries.report_usage(query_id, helpful_ids)
        recorded = False
        for name, own_id, items in parts:
            with self.using(name) as kb:
                recorded = kb.queries.report_usage(own_id, [i for i in helpful_ids if i in items]) or recorded
        return recorded

    def close(self) -> None:
        """Stop following and close every store. A refresh under way is not waited for long:
        a build stopped part-way is cleared and done again by the next writer of its store."""
        with self._queue.wake:
            self._queue.stopping = True
            self._queue.wake.notify_all()
            workers = list(self._workers.values())
        self._upkeep.halt.set()  # fetches under way stop, builds not started are not
        self._publications.close()
        deadline = time.monotonic() + STOP_SECONDS
        for thread in [self._thread, *workers]:
            if thread is not None:
                thread.join(timeout=max(0.0, deadline - time.monotonic()))
        with self._lock:
            for member in self._members.values():
                self._close(member)
            for kb in self._retired.values():
                kb.close()
            self._retired.clear()
