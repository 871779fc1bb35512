"""What a workspace says of each repository it serves (GET /api/v1/repositories, MCP
list_repositories): where it comes from, the commit served and when it was built, its status
and problem, and whether its store is behind its repository."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from kbc.analyzers.gitrepo import git, head_commit, without_password
from kbc.services.members import Member
from kbc.store.state import finished_at, read_state


def described(member: Member) -> dict[str, Any]:
    """``member`` as the listing shows it."""
    state = read_state(member.store)
    finished = finished_at(member.store, state) if state is not None else 0.0
    built_at = (
        datetime.fromtimestamp(finished, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        if finished
        else ""
    )
    served = state.commit if state is not None else ""
    ahead = member.pushed or upstream(member)
    behind = bool(served and ahead and ahead != served)
    if member.state in ("queued", "refreshing"):
        status = "building" if state is None else member.state
    elif member.state == "failed":
        status = "failed"
    else:
        status = "ready" if state is not None else "not built"
    followed = member.followed
    return {
        "name": member.name,
        "path": "" if member.entry.url or followed is not None else str(member.root),
        "url": without_password(member.entry.url) or (str(followed.location) if followed else ""),
        "branch": member.entry.branch,
        "commit": served,
        "built_at": built_at,
        "status": status,
        "behind": behind,
        "upstream": ahead if behind else "",
        "open": member.kb is not None,
        "problem": member.problem,
        "retry_at": clock(member.retry_at) if member.state == "failed" else "",
        "publication": followed.served.id if followed is not None and followed.served is not None else "",
    }


def upstream(member: Member) -> str:
    """The commit the repository is at now: its work tree's HEAD, or (a URL) the remote
    branch as last fetched; "" for a published store (what is published is what is served)."""
    if member.followed is not None or not member.root.is_dir():
        return ""
    if not member.entry.url:
        return head_commit(member.root)
    branch = member.entry.branch or git(member.root, "symbolic-ref", "--short", "HEAD", check=False).strip()
    if not branch:
        return ""
    return git(
        member.root,
        "rev-parse",
        "--verify",
        "-q",
        f"refs/remotes/origin/{branch}^{{commit}}",
        check=False,
    ).strip()


def clock(monotonic: float) -> str:
    """The UTC time (ISO 8601, seconds) a ``time.monotonic()`` reading stands for."""
    at = datetime.fromtimestamp(time.time() + monotonic - time.monotonic(), UTC)
    return at.isoformat(timespec="seconds").replace("+00:00", "Z")
