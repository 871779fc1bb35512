"""Knowledge drift: which Markdown documents are behind the code they describe.

A document names the code it governs in YAML front-matter::

    ---
    refs:
      - kbc/retrieval/**
      - kbc/index/lexical.py
    ---

and is behind when governed files changed in commits after its own last
commit, when its body mentions code names the facts no longer hold (a changelog's
entry that says the name was removed or replaced excepted), when a ref
matches no tracked file, or when its front-matter cannot be read. This module
holds the pure logic (front-matter, globs; mentions are read by
:mod:`kbc.analyzers.mentions` and judged by whatever ``code`` is given, over the linked
facts in :mod:`kbc.graph.mentions`) and the two ``git log`` queries;
``kbc.services.drift`` wires them to the store.
Nothing here raises on a bad document: problems come back as values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml  # type: ignore[import-untyped,unused-ignore]

from kbc.analyzers.gitrepo import git, git_lines
from kbc.analyzers.mentions import MentionJudge, code_spans, is_changelog, taken_away
from kbc.domain.drift import DriftReason, DriftReport

# -- front-matter ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """A document split into its front-matter's ``refs`` and its body."""

    refs: tuple[str, ...]  # globs as written, leading "./" and "/" removed
    body: str  # the text after the closing "---" line (the whole text without front-matter)
    body_line: int  # 1-based line of the file where ``body`` starts
    problem: str = ""  # why the front-matter could not be read, "" when it could (or there is none)
    scopes: tuple[str, ...] = ()  # `scope:` (knowledge documents): one name or a list
    title: str = ""  # `title:`, when a string
    tags: tuple[str, ...] = ()  # `tags:`: one name or a list


def _is_delimiter(line: str) -> bool:
    return line.rstrip("\r\n").rstrip(" \t") == "---"


def parse_front_matter(text: str) -> FrontMatter:
    """Split ``text`` at a leading ``---`` line and the next ``---`` line; read ``refs`` from the YAML.

    ``refs`` may be a list of strings or one string. Anything else, invalid YAML,
    a block that is not a mapping or a block never closed gives ``problem``.
    """
    lines = text.removeprefix("\ufeff").splitlines(keepends=True)
    if not lines or not _is_delimiter(lines[0]):
        return FrontMatter((), text, 1)
    close = next((i for i in range(1, len(lines)) if _is_delimiter(lines[i])), 0)
    if not close:
        return FrontMatter(
            (),
            "".join(lines[1:]),
            2,
            "front-matter opened by `---` on line 1 is never closed by a `---` line",
        )
    block = "".join(lines[1:close])
    body, body_line = "".join(lines[close + 1 :]), close + 2
    try:
        data = yaml.safe_load(block)
    except Exception as exc:  # YAMLError, or a constructor's ValueError: a value, not a crash
        return FrontMatter((), body, body_line, f"front-matter is not valid YAML: {_yaml_problem(exc)}")
    if data is None:
        return FrontMatter((), body, body_line)
    if not isinstance(data, dict):
        return FrontMatter(
            (),
            body,
            body_line,
            f"front-matter must be a mapping of keys to values, not a {type(data).__name__}",
        )
    scopes = _scopes(data.get("scope"))
    title = data["title"].strip() if isinstance(data.get("title"), str) else ""
    tags = _scopes(data.get("tags"))
    raw = data.get("refs")
    if raw is None:
        return FrontMatter((), body, body_line, scopes=scopes, title=title, tags=tags)
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, list):
        return FrontMatter(
            (),
            body,
            body_line,
            f"front-matter `refs` must be a list of globs, not a {type(raw).__name__}",
            scopes=scopes,
            title=title,
            tags=tags,
        )
    refs: list[str] = []
    problems: list[str] = []
    for number, item in enumerate(items, 1):
        pattern = item.strip().removeprefix("./").lstrip("/") if isinstance(item, str) else ""
        if pattern and pattern != "!":
            refs.append(pattern)
        else:
            problems.append(f"item {number} ({item!r}) is not a glob")
    problem = f"front-matter `refs`: {'; '.join(problems)}" if problems else ""
    return FrontMatter(tuple(refs), body, body_line, problem, scopes=scopes, title=title, tags=tags)


def _scopes(raw: object) -> tuple[str, ...]:
    """``scope: domain`` or ``scope: [domain, payments]`` (or ``tags:``): the names, stripped of
    slashes."""
    items = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    names = (str(item).strip().strip("/") for item in items if isinstance(item, (str, int)))
    return tuple(dict.fromkeys(name for name in names if name))


def _yaml_problem(exc: Exception) -> str:
    problem = getattr(exc, "problem", None)
    if not isinstance(problem, str) or not problem:
        lines = str(exc).splitlines()
        problem = lines[0] if lines else type(exc).__name__
    line = getattr(getattr(exc, "problem_mark", None), "line", None)
    if isinstance(line, int):
        return f"{problem} (line {line + 2})"  # the mark counts from 0 inside the block after line 1
    return problem


# -- globs ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Glob:
    """One ``refs`` entry: gitignore-style, anchored at the repository root."""

    pattern: str  # as written
    regex: re.Pattern[str]
    negated: bool  # "!pattern": excludes what earlier patterns included
    directory_only: bool  # "pattern/": matches directories (and so everything below them)

    def matches(self, path: str) -> bool:
        """Whether ``path`` or one of its parent directories matches (negation aside)."""
        pieces = path.split("/")
        start = len(pieces) - 1 if self.directory_only else len(pieces)
        return any(self.regex.fullmatch("/".join(pieces[:end])) for end in range(start, 0, -1))


@lru_cache(maxsize=4096)
def compile_glob(pattern: str) -> Glob:
    """``*`` and ``?`` stay within a path segment, ``**`` spans segments, ``[...]`` is a class."""
    negated = pattern.startswith("!")
    body = pattern[1:] if negated else pattern
    body = body.removeprefix("./").lstrip("/")
    directory_only = body.endswith("/")
    body = body.rstrip("/")
    return Glob(pattern, re.compile(_translate(body)), negated, directory_only)


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            whole_segment = (i == 0 or pattern[i - 1] == "/") and (j == n or pattern[j] == "/")
            if j - i >= 2 and whole_segment:
                if j == n:
                    out.append(".*")  # "dir/**" or "**": everything below
                else:
                    out.append("(?:[^/]+/)*")  # "**/": zero or more directories
                    j += 1
            else:
                out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = i + 1
            if j < n and pattern[j] in "!^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(c))
                i += 1
                continue
            inner = pattern[i + 1 : j]
            negate = inner[:1] in ("!", "^")
            inner = inner[1:] if negate else inner
            inner = inner.replace("\\", "\\\\").replace("[", "\\[")
            out.append(f"[^/{inner}]" if negate else f"(?!/)[{inner}]")
            i = j + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def governs(refs: Sequence[str], path: str) -> bool:
    """Whether ``refs`` govern ``path``: as in .gitignore, the last pattern that matches decides."""
    governed = False
    for pattern in refs:
        glob = compile_glob(pattern)
        if glob.negated == governed and glob.matches(path):
            governed = not glob.negated
    return governed


def stale_refs(refs: Sequence[str], tracked: Iterable[str]) -> tuple[str, ...]:
    """The including (not ``!``) patterns that match no tracked path, in the order written."""
    paths = list(tracked)
    return tuple(
        r for r in refs if not compile_glob(r).negated and not any(compile_glob(r).matches(p) for p in paths)
    )


# -- git history ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    date: str  # committer date, YYYY-MM-DD
    paths: tuple[str, ...]  # paths it changed, relative to the repository root (renames: both sides)


def _log(root: Path, *args: str) -> Iterator[Commit]:
    """``git log`` newest first, one Commit per entry; nothing when git is missing or fails."""
    sha, date = "", ""
    paths: list[str] = []
    for line in git_lines(
        root,
        "--literal-pathspecs",
        "log",
        "--format=%x00%H %cs",
        "--name-only",
        "--relative",
        "--no-renames",
        *args,
    ):
        line = line.rstrip("\n")
        if line.startswith("\0"):
            if sha:
                yield Commit(sha, date, tuple(paths))
            sha, _, date = line[1:].partition(" ")
            paths = []
        elif line:
            paths.append(line)
    if sha:
        yield Commit(sha, date, tuple(paths))


def last_commits(root: Path, paths: Iterable[str]) -> dict[str, tuple[str, str]]:
    """(commit, YYYY-MM-DD) of the last commit touching each path; missing when never committed."""
    wanted = set(paths)
    found: dict[str, tuple[str, str]] = {}
    if not wanted:
        return found
    for commit in _log(root, "--", *sorted(wanted)):
        for path in commit.paths:
            if path in wanted and path not in found:
                found[path] = (commit.sha, commit.date)
        if len(found) == len(wanted):
            break
    return found


def commits_after(root: Path, moment: str) -> list[Commit]:
    """The commits of HEAD's history made after ``moment`` (ISO 8601), newest first: for a
    document kept in another repository, whose own commits are not in this history. A
    commit in the same second is not after it (git's --since counts it)."""
    from datetime import datetime, timedelta

    try:
        after = (datetime.fromisoformat(moment) + timedelta(seconds=1)).isoformat()
    except ValueError:
        return []
    return list(_log(root, f"--since={after}", "HEAD", "--", "."))


def commit_time(root: Path, commit: str) -> str:
    """The ISO 8601 committer time of ``commit`` ("" when git cannot tell)."""
    return git(root, "show", "-s", "--format=%cI", commit, check=False).strip()


def commits_since(root: Path, commit: str) -> list[Commit]:
    """The commits reachable from HEAD and not from ``commit``, newest first, with the paths they changed."""
    return list(_log(root, f"{commit}..HEAD", "--", "."))


# -- one document -------------------------------------------------------------------


def check_document(
    path: str,
    front: FrontMatter,
    *,
    tracked: Sequence[str],
    code: MentionJudge,
    last: tuple[str, str] | None = None,
    history: Sequence[Commit] = (),
) -> DriftReport | None:
    """The document's drift report, or None when it is up to date.

    ``tracked`` lists the repository's tracked paths; ``last`` is the
    document's last commit and its date; ``history`` the commits after it
    (:func:`commits_since`).
    """
    reasons: list[DriftReason] = []
    if front.refs and last is not None:
        touching = [(c, [p for p in c.paths if p != path and governs(front.refs, p)]) for c in history]
        touching = [(c, files) for c, files in touching if files]
        if touching:
            count = len({c.sha for c, _ in touching})
            latest = max(c.date for c, _ in touching)
            files = tuple(sorted({f for _, changed in touching for f in changed}))
            reasons.append(
                DriftReason(
                    "code_changed",
                    f"{_plural(count, 'commit')} since the document's last commit ({last[1]}) changed "
                    f"{_plural(len(files), 'governed file')}; the latest on {latest}",
                    commits_since=count,
                    last_change=latest,
                    files=files,
                )
            )
    names = code.missing(code_spans(front.body, front.body_line))
    if names and is_changelog(path):  # a history may name what it says is gone
        gone = taken_away(front.body)
        names = tuple(n for n in names if n not in gone)
    if names:
        reasons.append(
            DriftReason(
                "missing_symbols",
                f"mentions {_plural(len(names), 'name')} the code no longer has",
                names=names,
            )
        )
    stale = stale_refs(front.refs, tracked)
    if stale:
        reasons.append(
            DriftReason(
                "stale_ref",
                f"{_plural(len(stale), 'ref')} {'matches' if len(stale) == 1 else 'match'} no tracked file",
                refs=stale,
            )
        )
    if front.problem:
        reasons.append(DriftReason("bad_front_matter", front.problem))
    if not reasons:
        return None
    sha, date = last if last is not None else ("", "")
    return DriftReport(path, tuple(reasons), sha, date)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
