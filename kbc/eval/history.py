"""Questions mined from a repository's own history, for ``kbc eval --history``.

A commit is a question with a known answer: its message says what had to be
done, and the source files it changed are where it had to be done. Walking
back from HEAD, a commit qualifies unless it is

- ``root``: it has no parent to evaluate against;
- ``merge``: it has more than one parent, or its subject starts with "merge";
- ``release``: a version bump, release or dependency update (``bump``,
  ``release``, a bare ``v1.2.3``, ``version 1.2.3``, ``update dependencies`` in
  the subject);
- ``formatting``: formatting, lint or typo work (``format``, ``lint``,
  ``black``, ``ruff``, ``isort``, ``flake8``, ``pre-commit``, ``codespell``,
  ``typo``, ``whitespace`` in the subject, or a ``style:`` prefix);
- ``non-source``: it changed no source file (only tests, docs, config, examples
  or vendored code; see :func:`kbc.analyzers.roles.role_of`);
- ``huge``: it changed more than ``max_files`` source files;
- ``new-files-only``: every source file it changed is new, so the store built
  at its parent holds none of them;
- ``no-issue``: only when mining for issue fixes (``referencing=True``), its
  message closes no issue the way GitHub reads it ("fixes #12", "closes
  owner/name#12", "resolves https://github.com/owner/name/issues/12").

The answer is the set of non-test source files it changed that existed in its
parent (modified, deleted, or the old path of a rename), as the parent names them.
Each answer path also carries the lines the commit changed in it, as the parent
numbers them (:func:`changed_lines`): one range per hunk of the commit's diff,
from its first to its last removed line; a hunk that only inserts counts as the
line it follows (line 1 at the top of a file). A rename without edits has none.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from kbc.analyzers.discover import language_of
from kbc.analyzers.gitrepo import GitFailed, git, git_lines
from kbc.analyzers.roles import role_of
from kbc.domain.errors import TargetError

MAX_FILES = 20

_RELEASE = re.compile(
    r"^\s*v?\d+(\.\d+)+\S*\s*$"  # the subject is just a version
    r"|\b(bump(s|ed|ing)?|release[sd]?|releasing)\b"
    r"|\bversion\s+v?\d+(\.\d+)+"
    r"|\b(update|upgrade|pin)s?\s+(\w+\s+)?(dependencies|deps|requirements)\b",
    re.IGNORECASE,
)
_FORMATTING = re.compile(
    r"\b(re)?format(s|ted|ting|ter)?\b|\blint(s|ing|er)?\b|\b(black|ruff|isort|flake8|codespell)\b"
    r"|\bpre-commit\b|\btypos?\b|\bwhitespace\b|^\s*style(\(.*?\))?!?:",
    re.IGNORECASE,
)
_MERGE = re.compile(r"^\s*merge\b", re.IGNORECASE)
# GitHub's closing keywords before an issue: #12, owner/name#12 or the issue's address.
_CLOSES = re.compile(
    r"\b(close[sd]?|fix(e[sd])?|resolve[sd]?)\b:?\s+"
    r"(([\w.-]+/[\w.-]+)?#|https?://github\.com/[\w.-]+/[\w.-]+/issues/)\d+\b",
    re.IGNORECASE,
)
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
_TRAILER = re.compile(
    r"^\s*(signed-off-by|co-authored-by|reviewed-by|acked-by|tested-by|reported-by|"
    r"change-id|cc):",
    re.IGNORECASE,
)


Ranges = tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class MinedCommit:
    sha: str
    parent: str
    parent_time: int  # the parent's committer time (seconds since the epoch)
    subject: str
    query: str  # subject and body, trailers dropped
    answer: tuple[str, ...]  # source files changed that existed in the parent (parent's paths)
    # (answer path, its changed line ranges in the parent, 1-based inclusive), by path
    hunks: tuple[tuple[str, Ranges], ...] = ()

    def lines(self) -> dict[str, Ranges]:
        """The changed line ranges by answer path (paths without any left out)."""
        return dict(self.hunks)


@dataclass(frozen=True, slots=True)
class SkippedCommit:
    sha: str
    subject: str
    reason: str


@dataclass(frozen=True, slots=True)
class Mined:
    commits: tuple[MinedCommit, ...]  # newest first
    skipped: tuple[SkippedCommit, ...] = ()
    scanned: int = 0
    reasons: dict[str, int] = field(default_factory=dict)  # skipped commits by reason


def message_reason(subject: str) -> str | None:
    """Why a commit with this subject line is not a question (None: it may be one)."""
    if _MERGE.search(subject):
        return "merge"
    if _RELEASE.search(subject):
        return "release"
    if _FORMATTING.search(subject):
        return "formatting"
    return None


def references_issue(message: str) -> bool:
    """Whether a commit message closes an issue with one of GitHub's keywords."""
    return bool(_CLOSES.search(message))


def is_source(path: str) -> bool:
    return role_of(path, language_of(path, b"")) == "source"


def query_of(message: str) -> str:
    """The commit message as a query: subject and body, without trailers like Signed-off-by."""
    lines = [line.rstrip() for line in message.strip().splitlines() if not _TRAILER.match(line)]
    return "\n".join(lines).strip()


def _git(root: Path, *args: str) -> str:
    try:
        return git(root, *args, errors="replace")
    except OSError as exc:
        raise TargetError(f"cannot run git: {exc}", hint="install git") from None
    except GitFailed as exc:
        detail = exc.stderr.strip().splitlines()
        raise TargetError(
            f"git {args[0]} failed in {root}: {detail[-1] if detail else 'no reason given'}",
            hint="give the path of a git work tree with at least one commit",
        ) from None


def repository_root(path: Path) -> Path:
    """The top of the git work tree holding ``path``."""
    if not path.is_dir():
        raise TargetError(f"{path} is not a directory", hint="give the path of a git work tree")
    return Path(_git(path, "rev-parse", "--show-toplevel").strip())


def _log(root: Path) -> Iterator[tuple[str, list[str], str]]:
    """(sha, parents, message) from HEAD back, newest first."""
    pending = ""
    for line in git_lines(root, "log", "--format=%x1e%H%x1f%P%x1f%B", "HEAD"):
        if line.startswith("\x1e") and pending:
            yield _record(pending)
            pending = ""
        pending += line
    if pending:
        yield _record(pending)


def _record(text: str) -> tuple[str, list[str], str]:
    sha, parents, message = text.lstrip("\x1e").split("\x1f", 2)
    return sha.strip(), parents.split(), message


def changed_paths(root: Path, parent: str, sha: str) -> list[tuple[str, str, str]]:
    """(status letter, path in the parent or "", path in the commit or "") per changed file."""
    out = _git(root, "diff-tree", "-r", "-M", "--no-commit-id", "--name-status", "-z", parent, sha)
    parts = out.split("\0")
    changes: list[tuple[str, str, str]] = []
    index = 0
    while index < len(parts) and parts[index]:
        status = parts[index][0]
        if status in "RC":
            changes.append((status, parts[index + 1], parts[index + 2]))
            index += 3
            continue
        path = parts[index + 1]
        changes.append((status, "" if status == "A" else path, "" if status == "D" else path))
        index += 2
    return changes


def changed_lines(root: Path, parent: str, sha: str, paths: Iterable[str]) -> tuple[tuple[str, Ranges], ...]:
    """The line ranges, numbered in ``parent``, that each hunk of the diff from ``parent`` to ``sha``
    changes in ``paths`` (give both paths of a rename), by the parent's path; one git call."""
    specs = [f":(literal){path}" for path in sorted(set(paths)) if path]
    if not specs:
        return ()
    # The diff options the user's configuration could change are pinned, so the ranges are too.
    out = _git(
        root,
        "diff",
        "--unified=0",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "-M",
        "--diff-algorithm=myers",
        "--inter-hunk-context=0",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        parent,
        sha,
        "--",
        *specs,
    )
    return parse_hunks(out)


def parse_hunks(diff: str) -> tuple[tuple[str, Ranges], ...]:
    """The pre-image line ranges of a ``--unified=0`` diff's hunks, by the pre-image path (sorted).

    A hunk ``@@ -a,b +c,d @@`` with ``b > 0`` covers lines ``a..a+b-1``; one with ``b == 0``
    only inserts, after line ``a``, and counts as line ``max(a, 1)``. New files have no ranges.
    """
    found: dict[str, set[tuple[int, int]]] = {}
    path = ""  # the current file's path in the parent ("" for a new file)
    in_header = False
    for line in diff.split("\n"):  # not splitlines(): a changed line may hold a form feed
        if line.startswith("diff --git "):
            path, in_header = "", True
        elif in_header and line.startswith("--- "):
            name = _unquote(line[4:].removesuffix("\t"))  # git adds a tab after a name with a space
            path = name[2:] if name.startswith("a/") else ""  # "/dev/null" for a new file
        elif line.startswith("@@"):  # changed lines start with "-", "+" or "\\", never "@"
            in_header = False
            match = _HUNK.match(line)
            if match and path:
                start, count = int(match[1]), 1 if match[2] is None else int(match[2])
                span = (start, start + count - 1) if count else (max(start, 1), max(start, 1))
                found.setdefault(path, set()).add(span)
    return tuple((name, tuple(sorted(ranges))) for name, ranges in sorted(found.items()))


def _unquote(name: str) -> str:
    """A path as git prints it in a diff header, C-quoted when it holds unusual characters."""
    if len(name) < 2 or not (name.startswith('"') and name.endswith('"')):
        return name
    out = bytearray()
    body, index = name[1:-1], 0
    while index < len(body):
        char, octal = body[index], body[index + 1 : index + 4]
        if char == "\\" and body[index + 1 : index + 2] in _ESCAPES:
            out.append(_ESCAPES[body[index + 1]])
            index += 2
        elif char == "\\" and len(octal) == 3 and all(c in "01234567" for c in octal):
            out.append(int(octal, 8) & 0xFF)  # one byte of a UTF-8 sequence
            index += 4
        else:
            out += char.encode("utf-8")
            index += 1
    return out.decode("utf-8", errors="replace")


def classify(
    root: Path,
    sha: str,
    parents: list[str],
    message: str,
    max_files: int = MAX_FILES,
    referencing: bool = False,
) -> MinedCommit | SkippedCommit:
    subject = message.strip().splitlines()[0].strip() if message.strip() else ""
    if len(parents) > 1:
        return SkippedCommit(sha, subject, "merge")
    if not parents:
        return SkippedCommit(sha, subject, "root")
    reason = message_reason(subject)
    if reason is not None:
        return SkippedCommit(sha, subject, reason)
    if referencing and not references_issue(message):
        return SkippedCommit(sha, subject, "no-issue")
    changes = changed_paths(root, parents[0], sha)
    source = [
        (status, old, new)
        for status, old, new in changes
        if (old and is_source(old)) or (new and is_source(new))
    ]
    if not source:
        return SkippedCommit(sha, subject, "non-source")
    if len(source) > max_files:
        return SkippedCommit(sha, subject, "huge")
    # A copy leaves its source untouched; every other status changed the parent's file.
    answer = sorted({old for status, old, _new in source if old and status != "C" and is_source(old)})
    if not answer:
        return SkippedCommit(sha, subject, "new-files-only")
    # Both paths of a rename, so the diff pairs them and numbers the lines in the old file.
    paths = [name for status, old, new in source if old in answer and status != "C" for name in (old, new)]
    hunks = tuple(
        (path, ranges) for path, ranges in changed_lines(root, parents[0], sha, paths) if path in answer
    )
    return MinedCommit(
        sha=sha,
        parent=parents[0],
        parent_time=0,
        subject=subject,
        query=query_of(message),
        answer=tuple(answer),
        hunks=hunks,
    )


def mine_commits(path: Path, count: int, max_files: int = MAX_FILES, referencing: bool = False) -> Mined:
    """The newest ``count`` qualifying commits reachable from HEAD, and what was skipped
    (``referencing``: only commits whose message closes an issue)."""
    root = repository_root(path)
    found: list[MinedCommit] = []
    skipped: list[SkippedCommit] = []
    scanned = 0
    if count > 0:
        for sha, parents, message in _log(root):
            scanned += 1
            result = classify(root, sha, parents, message, max_files, referencing)
            if isinstance(result, SkippedCommit):
                skipped.append(result)
                continue
            found.append(result)
            if len(found) >= count:
                break
    times = _commit_times(root, sorted({c.parent for c in found}))
    commits = tuple(replace(c, parent_time=times.get(c.parent, 0)) for c in found)
    reasons = dict(sorted(Counter(s.reason for s in skipped).items()))
    return Mined(commits, tuple(skipped), scanned, reasons)


def _commit_times(root: Path, shas: list[str]) -> dict[str, int]:
    if not shas:
        return {}
    out = _git(root, "show", "-s", "--format=%H %ct", *shas)
    times: dict[str, int] = {}
    for line in out.splitlines():
        sha, _, stamp = line.partition(" ")
        if stamp.strip().isdigit():
            times[sha] = int(stamp)
    return times
