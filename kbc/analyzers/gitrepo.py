"""Git operations of a refresh: where HEAD is, what changed since a commit, following a
remote repository (clone, then fetch + hard reset). GitPython, imported when used."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kbc.domain.errors import TargetError
from kbc.domain.settings import default_data_dir

_URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|[\w.-]+@[\w.-]+:)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Changes:
    """Paths that differ between a commit and the work tree, from ``git diff --name-status -M``."""

    added: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    renamed: tuple[tuple[str, str], ...] = field(default=())  # (old, new)

    @property
    def count(self) -> int:
        return len(self.added) + len(self.modified) + len(self.deleted) + len(self.renamed)


def is_url(target: str) -> bool:
    return bool(_URL.match(target))


def _repo(root: Path) -> Any:
    import git

    try:
        return git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None


def head_commit(root: Path) -> str:
    """HEAD of the repository at ``root``; "" outside git or before the first commit."""
    repo = _repo(root)
    if repo is None:
        return ""
    with repo:
        try:
            return str(repo.head.commit.hexsha)
        except ValueError:
            return ""


def changes_since(root: Path, commit: str) -> Changes | None:
    """What differs between ``commit`` and the work tree; None when ``commit`` is unknown here."""
    import git

    repo = _repo(root)
    if repo is None or not commit:
        return None
    with repo:
        try:
            out = repo.git.diff("--name-status", "-M", "-z", "--no-ext-diff", commit, "--", ".")
        except git.GitCommandError:
            return None
    added: list[str] = []
    modified: list[str] = []
    deleted: list[str] = []
    renamed: list[tuple[str, str]] = []
    parts = str(out).split("\0")
    index = 0
    while index < len(parts) and parts[index]:
        status = parts[index]
        if status.startswith(("R", "C")):
            old, new = parts[index + 1], parts[index + 2]
            if status.startswith("R"):
                renamed.append((old, new))
            else:
                added.append(new)
            index += 3
            continue
        path = parts[index + 1]
        {"A": added, "D": deleted}.get(status[0], modified).append(path)
        index += 2
    return Changes(tuple(sorted(added)), tuple(sorted(modified)), tuple(sorted(deleted)),
                   tuple(sorted(renamed)))


def data_dir(configured: str = "") -> Path:
    """kbc's data folder: ``store.data_dir`` (KBC_DATA_DIR), else the platform's."""
    return Path(configured).expanduser() if configured else default_data_dir()


def checkout_path(url: str, data: str = "") -> Path:
    """Where kbc keeps its clone of ``url``: readable name plus a hash of the whole URL."""
    name = re.sub(r"[^\w.-]+", "-", url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")) or "repo"
    digest = hashlib.sha256(url.encode()).hexdigest()[:10]
    return data_dir(data) / "repos" / f"{name}-{digest}"


def follow(url: str, branch: str = "", data: str = "") -> tuple[Path, str]:
    """Clone ``url`` into kbc's data folder, or fetch it and hard-reset to the remote branch.

    Returns the work tree and the branch followed.
    """
    import git

    target = checkout_path(url, data)
    try:
        if not (target / ".git").is_dir():
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(target.name + ".partial")
            if partial.exists():
                import shutil

                shutil.rmtree(partial)
            cloned = git.Repo.clone_from(url, partial, branch=branch) if branch else git.Repo.clone_from(
                url, partial)
            cloned.close()
            partial.rename(target)
        with git.Repo(target) as repo:
            followed = branch or repo.active_branch.name
            repo.remotes.origin.fetch()
            repo.git.reset("--hard", f"origin/{followed}")
    except git.GitCommandError as exc:
        raise TargetError(f"cannot follow {url}: {git_failure(exc.stderr or str(exc))}",
                          hint="check the URL, the branch and that this machine can reach it") from None
    return target, followed


def git_failure(stderr: str) -> str:
    """What git said went wrong, from its stderr as GitPython quotes it (``stderr: '…'``):
    its ``fatal:`` or ``error:`` lines, else its last line with words in it."""
    lines = [line.strip().removeprefix("stderr:").strip(" '") for line in stderr.splitlines()]
    said = [line for line in lines if line.startswith(("fatal:", "error:"))]
    if said:
        return "; ".join(dict.fromkeys(said))
    worded = [line for line in lines if any(c.isalnum() for c in line)]
    return worded[-1] if worded else "git failed without saying why"
