"""The repositories of a workspace: each entry expanded (a monorepo's projects become
repositories of their own), and what the workspace knows of each (:class:`Member`): a refresh
that failed is tried again after a wait that doubles with each failure (:func:`retry_after`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kbc.domain.errors import KbcError
from kbc.domain.settings import Settings
from kbc.domain.workspace import RepositoryEntry
from kbc.services.knowledge import KnowledgeBase
from kbc.services.published import Followed
from kbc.store.layout import state_file, store_path

RETRY_FIRST_SECONDS = 30.0  # the wait before a failed refresh is tried again, doubled each failure
RETRY_MOST_SECONDS = 3600.0  # up to this


@dataclass(slots=True)
class Member:
    """One repository of the workspace and what the workspace knows of it."""

    entry: RepositoryEntry
    root: Path  # its work tree (for a URL, kbc's clone of it)
    settings: Settings
    store: Path
    pinned: KnowledgeBase | None = None  # a knowledge base given open (never closed when idle)
    kb: KnowledgeBase | None = None
    users: int = 0
    last_used: float = 0.0
    state: str = "idle"  # idle, queued, refreshing, failed
    problem: str = ""
    pushed: str = ""  # the commit a push webhook announced, until a refresh brings it in
    refreshed: float = 0.0  # when its last refresh ended
    checked: tuple[float, bool] | None = None  # when it was last found behind or not, and which
    failures: int = 0  # refreshes failed in a row
    retry_at: float = 0.0  # when (time.monotonic) the last failed one may be tried again
    followed: Followed | None = None  # a published store (s3://...) it serves, followed

    @property
    def name(self) -> str:
        return self.entry.name

    def built(self) -> bool:
        return state_file(self.store).is_file()

    def failed(self, problem: str, now: float) -> None:
        self.state, self.problem = "failed", problem
        self.failures += 1
        self.retry_at = now + retry_after(self.failures)

    def succeeded(self) -> None:
        self.state, self.problem, self.failures, self.retry_at = "idle", "", 0, 0.0

    def backing_off(self, now: float) -> bool:
        """Whether its last refresh failed and is not to be tried again yet (but when asked to)."""
        return self.state == "failed" and now < self.retry_at


def retry_after(failures: int) -> float:
    """Seconds before a refresh that failed ``failures`` times in a row is tried again."""
    return min(RETRY_MOST_SECONDS, RETRY_FIRST_SECONDS * 2.0 ** min(max(0, failures - 1), 32))


def expand(entries: Sequence[RepositoryEntry]) -> list[RepositoryEntry]:
    """Each monorepo entry replaced by its sub-projects (folders matching its ``projects``
    globs, each named ``<name>/<folder>``); names must be unique."""
    found: list[RepositoryEntry] = []
    for entry in entries:
        if not entry.projects:
            found.append(entry)
            continue
        if entry.url:
            raise KbcError(
                f"repository {entry.name!r}: projects are read from a folder, not a URL",
                hint="clone it and give its path, or drop projects",
            )
        base = Path(entry.path).expanduser().resolve()
        folders = sorted(
            {
                p
                for pattern in entry.projects
                for p in base.glob(pattern)
                if p.is_dir() and p.resolve().is_relative_to(base) and p.name != ".git"
            }
        )
        if not folders:
            raise KbcError(
                f"repository {entry.name!r}: no folder matches {list(entry.projects)}",
                hint="projects are globs of folders relative to its path, e.g. services/*",
            )
        for folder in folders:
            relative = folder.resolve().relative_to(base).as_posix()
            found.append(RepositoryEntry(f"{entry.name}/{relative}", str(folder), branch=entry.branch))
    names = [e.name for e in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise KbcError(
            f"two repositories are named {', '.join(twice)}",
            hint="give each its own name (name=path with --repo, or name = ... in [[repositories]])",
        )
    return found


def store_of(entry: RepositoryEntry, root: Path, settings: Settings) -> Path:
    """A repository's store: the one its entry names, else where its settings put it."""
    return store_path(root, settings, Path(entry.store).expanduser() if entry.store else None)


def same_url(url: str) -> str:
    """A URL compared without its scheme's case, credentials, trailing slash or ``.git``."""
    text = url.strip().rstrip("/").removesuffix(".git").rstrip("/")
    scheme, sep, rest = text.partition("://")
    if sep:
        rest = rest.rsplit("@", 1)[-1] if "@" in rest.split("/", 1)[0] else rest
        host, slash, path = rest.partition("/")
        return f"{scheme.lower()}://{host.lower()}{slash}{path}"
    return text


def follows_knowledge(member: Member, urls: set[str], branch: str) -> bool:
    """Whether one of ``member``'s knowledge roots (as configured, or as its last build read
    them) follows a repository at one of ``urls`` on ``branch``."""
    from kbc.services.team import read_manifest

    roots = [(r.url, r.branch) for r in member.settings.knowledge if r.url]
    roots += [(r.url, r.branch) for r in read_manifest(member.store).roots if r.url]
    return any(
        same_url(url) in urls and (not branch or not followed or followed == branch)
        for url, followed in roots
    )
