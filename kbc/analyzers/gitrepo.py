"""kbc's one way to git: every git command kbc runs goes through :func:`git` or
:func:`git_lines`, as a subprocess of the ``git`` program.

A repository is untrusted input, its own ``.git/config`` included, and git runs
commands that configuration names: an fsmonitor hook on nearly every command,
an external diff, a pager, hooks. Each call overrides those settings on its
command line (which outranks every configuration file), so reading a
repository never runs anything it names.

Also here: where HEAD is, what changed since a commit, and following a remote
repository (clone, then fetch + hard reset).
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kbc.domain.errors import TargetError
from kbc.domain.settings import default_data_dir, environment_with

# What a repository's configuration may not make git run (the command line wins over it).
SAFE = (
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.pager=cat",
    "-c",
    "diff.external=",
    "-c",
    "core.quotePath=false",
    "-c",
    "protocol.ext.allow=never",
)
_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "LC_ALL": "C"}


class GitFailed(Exception):
    """A git command that exited non-zero; ``stderr`` is what git said."""

    def __init__(self, stderr: str) -> None:
        super().__init__(stderr)
        self.stderr = stderr


def _command(root: Path | None, args: Sequence[str]) -> list[str]:
    return ["git", *SAFE, *(["-C", str(root)] if root is not None else []), *args]


def git(
    root: Path | None,
    *args: str,
    check: bool = True,
    errors: str = "surrogateescape",
    given: str | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """What ``git -C root args`` prints (raises :class:`GitFailed` when it fails and ``check``;
    OSError when there is no git). ``given`` is its standard input; ``env`` adds variables
    (a temporary index, an author)."""
    done = subprocess.run(
        _command(root, args),
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors=errors,
        env=environment_with({**_ENV, **(env or {})}),
        input=given,
        stdin=None if given is not None else subprocess.DEVNULL,
        check=False,
    )
    if done.returncode != 0 and check:
        raise GitFailed(done.stderr)
    return done.stdout if done.returncode == 0 else ""


def git_ok(root: Path, *args: str) -> bool:
    """Whether ``git -C root args`` succeeds (for the commands that answer by exit code)."""
    done = subprocess.run(
        _command(root, args),
        capture_output=True,
        env=environment_with(_ENV),
        stdin=subprocess.DEVNULL,
        check=False,
    )
    return done.returncode == 0


def git_lines(root: Path, *args: str, errors: str = "replace") -> Iterator[str]:
    """The lines ``git -C root args`` prints, as it prints them (a long log is never held whole,
    and stopping early stops git); nothing when git is missing or fails."""
    try:
        process = subprocess.Popen(
            _command(root, args),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
            errors=errors,
            env=environment_with(_ENV),
        )
    except OSError:
        return
    with process:
        assert process.stdout is not None
        try:
            yield from process.stdout
        finally:
            if process.poll() is None:
                process.kill()


def work_tree(root: Path) -> Path | None:
    """The top of the git work tree ``root`` is in; None outside one (or in a bare repository),
    and None for a folder its work tree ignores (an unpacked archive inside a repository's
    ignored folder is no part of that repository: git lists none of its files)."""
    try:
        inside = git(root, "rev-parse", "--is-inside-work-tree").strip()
    except (GitFailed, OSError):
        return None
    if inside != "true":
        return None
    top = Path(git(root, "rev-parse", "--show-toplevel").strip())
    if top.resolve() != root.resolve() and git_ok(root, "check-ignore", "-q", "."):
        return None
    return top


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


def head_commit(root: Path) -> str:
    """HEAD of the repository at ``root``; "" outside git or before the first commit."""
    if work_tree(root) is None:
        return ""
    return git(root, "rev-parse", "--verify", "-q", "HEAD^{commit}", check=False).strip()


def uncommitted(root: Path, store: Path | None = None) -> str:
    """What differs between HEAD and the work tree under ``root`` in the files kbc reads (the
    tracked ones: changed, staged, added or removed; the ``store`` folder left out), as a digest
    of each such path's state and content; "" when nothing does (and outside git)."""
    top = work_tree(root)
    if top is None:
        return ""
    try:
        status = git(root, "status", "--porcelain", "-z", "--untracked-files=no", "--", ".")
    except GitFailed:
        return ""
    inside = ""
    if store is not None and store.resolve().is_relative_to(top.resolve()):
        inside = store.resolve().relative_to(top.resolve()).as_posix() + "/"
    entries = sorted(
        {
            (entry[:2], entry[3:])
            for entry in status.split("\0")
            if len(entry) > 3 and entry[2] == " " and "\n" not in entry
        }
    )
    entries = [(state, path) for state, path in entries if not (inside and path.startswith(inside))]
    if not entries:
        return ""
    # A link is its target's name, never what it points at (which may be outside the tree).
    blobs = {path: "link:" + os.readlink(top / path) for _, path in entries if (top / path).is_symlink()}
    present = [path for _, path in entries if path not in blobs and (top / path).is_file()]
    if present:
        hashed = git(
            top, "hash-object", "--no-filters", "--stdin-paths", check=False, given="\n".join(present) + "\n"
        )
        blobs.update(zip(present, hashed.split(), strict=False))
    digest = hashlib.sha256()
    for state, path in entries:
        digest.update(f"{state}\0{path}\0{blobs.get(path, '-')}\n".encode())
    return digest.hexdigest()[:16]


def changes_since(root: Path, commit: str) -> Changes | None:
    """What differs between ``commit`` and the work tree; None when ``commit`` is unknown here."""
    if not commit or work_tree(root) is None:
        return None
    try:
        out = git(
            root, "diff", "--name-status", "-M", "-z", "--no-ext-diff", "--no-textconv", commit, "--", "."
        )
    except GitFailed:
        return None
    added: list[str] = []
    modified: list[str] = []
    deleted: list[str] = []
    renamed: list[tuple[str, str]] = []
    parts = out.split("\0")
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
    return Changes(
        tuple(sorted(added)), tuple(sorted(modified)), tuple(sorted(deleted)), tuple(sorted(renamed))
    )


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
    target = checkout_path(url, data)
    try:
        if not (target / ".git").is_dir():
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(target.name + ".partial")
            if partial.exists():
                import shutil

                shutil.rmtree(partial)
            git(None, "clone", "-q", *(["--branch", branch] if branch else []), "--", url, str(partial))
            partial.rename(target)
        followed = branch or git(target, "symbolic-ref", "--short", "HEAD").strip()
        git(target, "fetch", "-q", "origin")
        git(target, "reset", "-q", "--hard", f"origin/{followed}")
    except GitFailed as exc:
        raise TargetError(
            without_password(f"cannot follow {url}: {git_failure(exc.stderr)}"),
            hint="check the URL, the branch and that this machine can reach it",
        ) from None
    return target, followed


_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s/:@'\"]*):[^\s/@'\"]*@")


def without_password(text: str) -> str:
    """``text`` with the password of every URL in it masked (``https://me:***@host/x``)."""
    return _USERINFO.sub(lambda m: f"{m.group(1)}:***@", text)


def git_failure(stderr: str) -> str:
    """What git said went wrong, from its stderr: its ``fatal:`` or ``error:`` lines, else its
    last line with words in it."""
    lines = [line.strip().removeprefix("stderr:").strip(" '") for line in stderr.splitlines()]
    said = [line for line in lines if line.startswith(("fatal:", "error:"))]
    if said:
        return "; ".join(dict.fromkeys(said))
    worded = [line for line in lines if any(c.isalnum() for c in line)]
    return worded[-1] if worded else "git failed without saying why"
