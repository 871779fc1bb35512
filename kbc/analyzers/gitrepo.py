"""kbc's one way to git: every git command kbc runs goes through :func:`git` or
:func:`git_lines`, as a subprocess of the ``git`` program.

A repository is untrusted input, its own ``.git/config`` included, and git runs
commands that configuration names: an fsmonitor hook on nearly every command,
an external diff, a pager, hooks. Each call overrides those settings on its
command line (which outranks every configuration file), so reading a
repository never runs anything it names.

Also here: where HEAD is, what changed since a commit, and following a remote
repository (clone, then fetch + hard reset). A clone or fetch goes to the network: it runs
with git's own low-speed limit (a connection that sends nothing fails) and a time limit on the
whole command, at which it is stopped with every process it started. Within
:func:`as_fetched`, following a URL already fetched does not go to the network again.
"""

from __future__ import annotations

import hashlib
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from kbc.domain.errors import TargetError
from kbc.domain.settings import Settings, default_data_dir, environment_with

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
POLL_SECONDS = 0.25  # how often a clone or fetch under way is checked against its limit


class GitFailed(Exception):
    """A git command that exited non-zero; ``stderr`` is what git said."""

    def __init__(self, stderr: str) -> None:
        super().__init__(stderr)
        self.stderr = stderr


class GitTimedOut(GitFailed):
    """A clone or fetch stopped at its time limit (or because kbc is closing)."""


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


@dataclass(frozen=True, slots=True)
class Limits:
    """How long a clone or fetch may take: ``seconds`` in all; ``stall`` seconds receiving
    nothing over HTTP(S) (git's http.lowSpeedTime); ``cancel`` stops it early when set."""

    seconds: float
    stall: int
    cancel: threading.Event | None = None

    @classmethod
    def of(cls, settings: Settings, cancel: threading.Event | None = None) -> Limits:
        """The limits ``settings`` give (discover.git_timeout, discover.git_stall_timeout)."""
        return cls(settings.git_timeout, settings.git_stall_timeout, cancel)


def fetch_git(root: Path | None, *args: str, limits: Limits) -> None:
    """``git clone`` or ``git fetch`` (``args``) within ``limits``: at the time limit (or on
    cancel) git and every process it started are stopped and :class:`GitTimedOut` is raised;
    :class:`GitFailed` when git fails by itself."""
    speed = ("-c", "http.lowSpeedLimit=1", "-c", f"http.lowSpeedTime={max(1, limits.stall)}")
    deadline = time.monotonic() + limits.seconds
    with subprocess.Popen(
        ["git", *SAFE, *speed, *(["-C", str(root)] if root is not None else []), *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
        env=environment_with(_ENV),
        start_new_session=True,  # its own process group: stopped whole, helpers included
    ) as process:
        try:
            while True:
                left = deadline - time.monotonic()
                try:
                    _, stderr = process.communicate(timeout=max(0.0, min(POLL_SECONDS, left)))
                    break
                except subprocess.TimeoutExpired:
                    cancelled = limits.cancel is not None and limits.cancel.is_set()
                    if cancelled or time.monotonic() >= deadline:
                        raise GitTimedOut(
                            "stopped: kbc is closing"
                            if cancelled
                            else f"did not finish within {limits.seconds:g} s (discover.git_timeout)"
                        ) from None
        except BaseException:  # the limit, the close, or an interrupt (Ctrl-C reaches kbc only)
            _stop(process)
            raise
    if process.returncode != 0:
        raise GitFailed(stderr or "")


def _stop(process: subprocess.Popen[str]) -> None:
    """Kill ``process`` and its process group (git's transport helpers, ssh), then reap it."""
    try:
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signal.SIGKILL)
        else:  # pragma: no cover - no process groups
            process.kill()
    except OSError:
        process.kill()
    try:
        process.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        pass  # a helper that left the group still holds the pipe: it is not waited for


# The URLs of this context fetched already, each with the failure its fetch met (None: fetched).
_FETCHED: ContextVar[Mapping[str, TargetError | None] | None] = ContextVar("kbc_fetched", default=None)


@contextmanager
def as_fetched(outcomes: Mapping[str, TargetError | None]) -> Iterator[None]:
    """Within the block, :func:`follow` of a URL in ``outcomes`` (each fetched by
    :func:`fetch_remote`, with the failure it met) does not go to the network again: it resets
    to what was fetched, or fails as the fetch did (the block's thread only)."""
    token = _FETCHED.set(outcomes)
    try:
        yield
    finally:
        _FETCHED.reset(token)


# One clone or fetch at a time into each of kbc's clones (two repositories may follow one URL).
_CHECKOUTS: dict[Path, threading.Lock] = {}
_CHECKOUTS_GUARD = threading.Lock()


def _checkout_lock(target: Path) -> threading.Lock:
    with _CHECKOUTS_GUARD:
        return _CHECKOUTS.setdefault(target, threading.Lock())


def fetch_remote(url: str, branch: str = "", data: str = "", *, limits: Limits) -> Path:
    """What following ``url`` takes from the network, within ``limits``: a clone into kbc's data
    folder (checked out at ``branch``), else a fetch of it (its work tree untouched). Returns
    the clone's folder."""
    target = checkout_path(url, data)
    verb = "fetch"
    try:
        with _checkout_lock(target):
            if (target / ".git").is_dir():
                fetch_git(target, "fetch", "-q", "origin", limits=limits)
                return target
            verb = "clone"
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(target.name + ".partial")
            if partial.exists():
                import shutil

                shutil.rmtree(partial)
            chosen = ["--branch", branch] if branch else []
            fetch_git(None, "clone", "-q", *chosen, "--", url, str(partial), limits=limits)
            partial.rename(target)
    except GitTimedOut as exc:
        raise TargetError(
            without_password(f"cannot follow {url}: git {verb} {exc.stderr}"),
            hint="check that this machine can reach it; a remote this slow needs a larger "
            "discover.git_timeout (KBC_GIT_TIMEOUT)",
        ) from None
    except GitFailed as exc:
        raise _cannot_follow(url, exc) from None
    return target


def follow(url: str, branch: str = "", data: str = "", *, limits: Limits) -> tuple[Path, str]:
    """Clone ``url`` into kbc's data folder, or fetch it, within ``limits`` (not again for a URL
    fetched already within :func:`as_fetched`), and hard-reset it to the remote branch.

    Returns the work tree and the branch followed.
    """
    fetched = _FETCHED.get() or {}
    failed = fetched.get(url)
    if failed is not None:
        raise TargetError(failed.message, hint=failed.hint)
    target = checkout_path(url, data) if url in fetched else fetch_remote(url, branch, data, limits=limits)
    try:
        followed = branch or git(target, "symbolic-ref", "--short", "HEAD").strip()
        git(target, "reset", "-q", "--hard", f"origin/{followed}")
    except GitFailed as exc:
        raise _cannot_follow(url, exc) from None
    return target, followed


def _cannot_follow(url: str, failed: GitFailed) -> TargetError:
    return TargetError(
        without_password(f"cannot follow {url}: {git_failure(failed.stderr)}"),
        hint="check the URL, the branch and that this machine can reach it",
    )


_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s/:@'\"]*):[^\s/@'\"]*@")
# A URL whose user is a token and no password (``https://ghp_…@github.com/…``): a user name
# of 16 or more characters holding a digit is taken for one.
_TOKEN_USER = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)(?=[^\s/:@'\"]*\d)[^\s/:@'\"]{16,}@")


def without_password(text: str) -> str:
    """``text`` with the password of every URL in it masked (``https://me:***@host/x``), and a
    user that is a token (``https://***@host/x``)."""
    return _TOKEN_USER.sub(lambda m: f"{m.group(1)}***@", _USERINFO.sub(lambda m: f"{m.group(1)}:***@", text))


def git_failure(stderr: str) -> str:
    """What git said went wrong, from its stderr: its ``fatal:`` or ``error:`` lines, else its
    last line with words in it."""
    lines = [line.strip().removeprefix("stderr:").strip(" '") for line in stderr.splitlines()]
    said = [line for line in lines if line.startswith(("fatal:", "error:"))]
    if said:
        return "; ".join(dict.fromkeys(said))
    worded = [line for line in lines if any(c.isalnum() for c in line)]
    return worded[-1] if worded else "git failed without saying why"
