"""Serving a published store (``kbc serve --repo NAME=s3://…``): the newest complete publication
pulled into kbc's data folder (:mod:`kbc.services.pull`), served read-only, and its manifest
read again every ``serve.publication_poll`` seconds; a newer publication is pulled and checked
beside the one served, opened, then swapped in (:meth:`Workspace.switch`), so no request fails
or reads two publications. When the store cannot be read (refused credentials, unreachable, a
publication of another kbc version) the last good publication goes on being served and the
problem is what the repository's listing and ``/metrics`` say. A server started while the store
is unreachable serves the newest copy an earlier run pulled."""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path

from kbc.analyzers.gitrepo import data_dir
from kbc.domain.errors import KbcError
from kbc.domain.workspace import RepositoryEntry
from kbc.providers.objectstore import Bucket, parse_location
from kbc.services.publication import Manifest
from kbc.services.pull import local_copies, newest, pull, sweep
from kbc.store.lock import hold_shared

HELD = 2  # copies this process holds (the one served, the one it replaced until its requests end)


class Followed:
    """One published store a server follows."""

    def __init__(self, entry: RepositoryEntry, data: str) -> None:
        self.location = parse_location(entry.published)
        self.bucket = Bucket(self.location)
        digest = hashlib.sha256(str(self.location).encode()).hexdigest()[:10]
        name = re.sub(r"[^\w.-]+", "-", entry.name)
        self.cache = data_dir(data) / "published" / f"{name}-{digest}"
        self.root = self.cache / "root"  # no work tree: files are served from the index only
        self.root.mkdir(parents=True, exist_ok=True)
        self.served: Manifest | None = None
        self.ok = False  # the last look at the store succeeded
        self.problem = ""
        self.checked = 0.0  # when (time.time) the store was last looked at
        self._held: list[tuple[Path, int]] = []

    def start(self) -> Path:
        """The store to serve before the bucket is read: the newest copy an earlier run pulled
        (a folder that does not exist when there is none)."""
        copies = local_copies(self.cache)
        if not copies:
            return self.cache / "none"
        manifest, folder = copies[0]
        self._hold(folder)
        self.served = manifest
        return folder

    def look(self) -> tuple[Manifest, Path] | None:
        """Read the manifest; a newer publication pulled, and its folder (None: nothing newer).
        Raises what went wrong."""
        found = newest(self.bucket)
        if found is None:
            raise KbcError(
                f"{self.location}: nothing published there yet",
                hint="run `kbc publish` for the repository (in CI: `kbc init-ci`)",
            )
        if self.served is not None and found.id == self.served.id:
            return None
        folder = pull(self.bucket, found, self.cache)
        self._hold(folder)
        return found, folder

    def _hold(self, folder: Path) -> None:
        self._held.append((folder, hold_shared(folder)))
        while len(self._held) > HELD:
            os.close(self._held.pop(0)[1])

    def swept(self) -> None:
        if self._held:
            sweep(self.cache, self._held[-1][0])

    def release(self) -> None:
        for _, handle in self._held:
            os.close(handle)
        self._held.clear()


class Publications:
    """Follows every published store of a workspace on a thread of its own: ``switch(name,
    folder)`` serves a newer publication; ``report(name, problem)`` tells what went wrong
    ("" once it is put right)."""

    def __init__(
        self,
        followed: dict[str, Followed],
        every: float,
        switch: Callable[[str, Path], None],
        report: Callable[[str, str], None],
    ) -> None:
        self.followed = followed
        self._every = every
        self._switch = switch
        self._report = report
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._looking = threading.Lock()

    def start(self) -> None:
        if self.followed and self._thread is None:
            self._thread = threading.Thread(target=self._follow, name="kbc-publications", daemon=True)
            self._thread.start()

    def _follow(self) -> None:
        while not self._stop.is_set():
            for name in self.followed:
                if self._stop.is_set():
                    return
                self.look(name)
            self._stop.wait(self._every)

    def look(self, name: str) -> None:
        """Look for a newer publication of ``name`` now and serve it; never raises."""
        followed = self.followed[name]
        with self._looking:
            try:
                found = followed.look()
                if found is not None:
                    self._switch(name, found[1])
                    followed.served = found[0]
                    followed.swept()
            except KbcError as error:
                followed.ok, followed.problem = False, _serving(followed, error.message)
            except Exception as exc:
                followed.ok, followed.problem = (
                    False,
                    _serving(followed, f"unexpected {type(exc).__name__}: {exc}"),
                )
            else:
                followed.ok, followed.problem = True, ""
            followed.checked = time.time()
            self._report(name, followed.problem)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        for followed in self.followed.values():
            followed.release()


def _serving(followed: Followed, problem: str) -> str:
    served = followed.served
    if served is None:
        return problem
    return f"{problem}; serving publication {served.id} (commit {served.commit[:12]}) meanwhile"
