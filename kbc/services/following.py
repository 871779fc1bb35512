"""What a knowledge base has read of its store's newest completed build, kept until a newer one
completes: the retriever, the manifest of the knowledge roots, the tracked files and the
credential values they hold, and the rankings and slices already answered (the same request on
the same build gives the same bytes, so a repeated one is answered without ranking again).

:class:`FollowedBuild` knows which build it holds by the build record, which each build
writes last and replaces whole; the knowledge base asks it to follow before every read, under
the knowledge base's own lock; :class:`ServedBuild` is that lock and that build as the knowledge
base's adapters read them."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from kbc.retrieval.profiles import Profile
from kbc.retrieval.results import Evidence, Ranking, Slice
from kbc.retrieval.retrieve import Retriever
from kbc.services.bounded import Bounded, ranking_bytes, slice_bytes
from kbc.services.serving import tracked_files
from kbc.services.team import Manifest, read_manifest
from kbc.store.layout import state_file

SLICE_CACHE = 256  # slices kept per build, at most
RANKING_CACHE = 8  # rankings kept per build, each packed into any budget asked (a workspace packs twice)
CACHE_MB = 8  # serve.cache_mb: MiB of slices and rankings kept per build, half of it each

SliceKey = tuple[
    str, Profile, int | None, frozenset[str], float | None
]  # task, profile, budget, exclude, minimum
RankingKey = tuple[str, Profile, frozenset[str]]  # task, profile, exclude


class FollowedBuild:
    def __init__(self, store: Path, cache_mb: int = CACHE_MB) -> None:
        """``cache_mb``: the MiB the slices and rankings already answered may hold, half each
        (as :mod:`kbc.services.bounded` estimates them); 0 keeps none."""
        self.store = store
        self.record: tuple[int, int, int] | None = None  # the build read
        self.retriever: Retriever | None = None
        self.manifest: Manifest | None = None
        self.tracked: dict[str, tuple[int, str]] | None = None  # path -> (secrets found, language)
        self.values: set[str] | None = None  # credential values of the files that hold some
        half = cache_mb * 2**20 // 2
        self._slices: Bounded[SliceKey, tuple[Slice, Evidence]] = Bounded(half, SLICE_CACHE, slice_bytes)
        self._rankings: Bounded[RankingKey, Ranking] = Bounded(half, RANKING_CACHE, ranking_bytes)
        self.cache_hits = 0  # slices answered from the cache of the newest build

    def build_record(self) -> tuple[int, int, int]:
        """Which completed build the store holds (inode, size, modification time of its build
        record); (0, 0, 0) when there is none."""
        try:
            found = state_file(self.store).stat()
        except OSError:
            return (0, 0, 0)
        return (found.st_ino, found.st_size, found.st_mtime_ns)

    def follow(self) -> None:
        """Forget what was read of an older build if a newer one completed since (the next read
        opens the newer one whole)."""
        record = self.build_record()
        if record != self.record:
            self.forget()
            self.record = record

    def forget(self) -> None:
        """Drop everything read. A retriever another request still holds is not closed under it:
        its connection closes when the last holder lets it go (the previous build's files stay
        readable)."""
        self.record = None
        self.retriever = None
        self.manifest = None
        self.tracked = None
        self.values = None
        self._slices.clear()
        self._rankings.clear()

    def close(self) -> None:
        if self.retriever is not None:
            self.retriever.close()
        self.forget()

    def tracked_files(self, root: Path) -> dict[str, tuple[int, str]]:
        """Path -> (credentials found, language) of every tracked file of the build."""
        if self.tracked is None:
            self.tracked = tracked_files(self.store, root)
        return self.tracked

    def credential_values(self, root: Path) -> set[str]:
        """The credential values of the files where the build found some, read again from
        ``root`` once per build."""
        if self.values is None:
            from kbc.analyzers.sweep import own_values

            holders = [
                (path, language) for path, (found, language) in self.tracked_files(root).items() if found
            ]
            found = own_values(root, holders, workers=1)
            self.values = {value for values in found.values() for value in values}
        return self.values

    def slice(self, key: SliceKey) -> tuple[Slice, Evidence] | None:
        found = self._slices.get(key)
        if found is not None:
            self.cache_hits += 1
        return found

    def keep_slice(self, key: SliceKey, found: tuple[Slice, Evidence]) -> None:
        self._slices.put(key, found)

    def ranking(self, key: RankingKey) -> Ranking | None:
        return self._rankings.get(key)

    def keep_ranking(self, key: RankingKey, ranking: Ranking) -> None:
        self._rankings.put(key, ranking)


class ServedBuild:
    """The build a knowledge base serves, read under the knowledge base's ``lock``: its
    retriever (opened by ``opener`` on first use), the manifest of its knowledge roots, its
    tracked files; what a server warms, and what caches of a build's answers key on."""

    def __init__(
        self, build: FollowedBuild, lock: threading.RLock, root: Path, opener: Callable[[], Retriever]
    ) -> None:
        self._build = build
        self._lock = lock
        self._root = root  # the repository: its tracked files are read again from it
        self._open = opener

    def follow(self) -> None:
        """Forget what was read from an older build if a newer one completed since (the next
        read opens the newer one whole)."""
        with self._lock:
            self._build.follow()

    def retriever(self) -> Retriever:
        """The retriever over the newest completed build: a build finished since it was
        opened (by this process or another) replaces it before the next request."""
        with self._lock:
            self.follow()
            if self._build.retriever is None:
                self._build.retriever = self._open()
            return self._build.retriever

    def marker(self) -> tuple[int, int, int]:
        """Changes exactly when a build completes: what caches of a build's answers key on."""
        return self._build.build_record()

    @property
    def cache_hits(self) -> int:
        """Slices answered from the cache of the newest build."""
        return self._build.cache_hits

    @property
    def fallback(self) -> str:
        """Why the open retriever reads lexically although its index has every vector (its
        model failed after it opened); "" when it does not."""
        with self._lock:
            live = self._build.retriever
        if live is None or live.mode != "lexical" or live.waiting:
            return ""
        return live.current_note() or "the embedding model failed: retrieval is lexical"

    def manifest(self) -> Manifest:
        """What the last build read of the knowledge roots (empty without any)."""
        with self._lock:
            self.follow()
            if self._build.manifest is None:
                self._build.manifest = read_manifest(self._build.store)
            return self._build.manifest

    def tracked_files(self) -> dict[str, tuple[int, str]]:
        """Path -> (credentials found, language) of every tracked file of the build."""
        with self._lock:
            self.follow()
            return self._build.tracked_files(self._root)

    def credential_values(self) -> set[str]:
        """The credential values of the files where the build found some, read again now."""
        with self._lock:
            self.follow()
            return self._build.credential_values(self._root)
