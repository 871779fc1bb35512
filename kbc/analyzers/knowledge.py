"""Knowledge roots: Markdown a team keeps beside the code, in a folder of the repository or
in a repository of its own, read into documents with their scopes.

A document's scopes come from its front-matter (``scope:`` one name or a list), else from
its top folder: ``domain/x.md`` is in ``domain``, ``projects/shop/y.md`` in
``projects/shop``, a file at the root's top in the root's name. Git is the source of truth:
in a git work tree only tracked files are read, each with the date of its last commit.
Every read is confined to the root, as the repository's own files are.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from kbc.analyzers.discover import UnsafeRead, read_inside
from kbc.analyzers.drift import last_commits, parse_front_matter
from kbc.analyzers.gitrepo import Limits, follow, git, head_commit, work_tree
from kbc.analyzers.secrets import redact
from kbc.domain.errors import TargetError
from kbc.domain.knowledge_roots import KnowledgeRoot
from kbc.domain.models import KNOWLEDGE_PREFIX

PREFIX = KNOWLEDGE_PREFIX
MARKDOWN = (".md", ".markdown")
PROJECTS = "projects"


@dataclass(frozen=True, slots=True)
class KnowledgeDocument:
    root: str  # the root's name
    path: str  # relative to the root
    text: str  # redacted
    scopes: tuple[str, ...]
    refs: tuple[str, ...]  # front-matter globs over the compiled repository's code
    commit: str = ""  # its last commit in the root ("" outside git)
    date: str = ""  # YYYY-MM-DD of that commit, or (no commit) of its last modification
    redacted: int = 0  # credentials replaced
    source: str = ""  # digest of the document as written (its text above is redacted)

    @property
    def indexed_path(self) -> str:
        return f"{PREFIX}{self.root}/{self.path}"


@dataclass(frozen=True, slots=True)
class OpenedRoot:
    root: KnowledgeRoot
    folder: Path  # its work tree
    head: str  # the commit it is at ("" outside git)
    branch: str  # the branch followed


def indexed_path(root: str, path: str) -> str:
    return f"{PREFIX}{root}/{path}"


def split_indexed(path: str) -> tuple[str, str] | None:
    """(root name, relative path) of an indexed knowledge path, None for any other path."""
    if not path.startswith(PREFIX):
        return None
    name, _, rest = path.removeprefix(PREFIX).partition("/")
    return (name, rest) if name and rest else None


def scopes_of(path: str, declared: tuple[str, ...], root: str) -> tuple[str, ...]:
    if declared:
        return declared
    parts = PurePosixPath(path).parts
    if len(parts) >= 3 and parts[0] == PROJECTS:
        return (f"{PROJECTS}/{parts[1]}",)
    return (parts[0],) if len(parts) >= 2 else (root,)


def is_project(scope: str) -> bool:
    return scope == PROJECTS or scope.startswith(PROJECTS + "/")


def open_root(root: KnowledgeRoot, repo: Path, data_dir: str, limits: Limits) -> OpenedRoot:
    """The root's folder: a folder (relative to the repository), or a clone of its URL
    fetched (within ``limits``) and reset to the followed branch, as `kbc refresh URL` does."""
    if root.url:
        folder, branch = follow(root.url, root.branch, data_dir, limits=limits)
        return OpenedRoot(root, folder, head_commit(folder), branch)
    folder = Path(root.path).expanduser()
    folder = (folder if folder.is_absolute() else repo / folder).resolve()
    if not folder.is_dir():
        raise TargetError(
            f"knowledge root {root.name!r}: {root.path} is not a folder",
            hint="fix the path in [[knowledge]], KBC_KNOWLEDGE or --knowledge",
        )
    branch = ""
    if work_tree(folder) is not None:
        branch = git(folder, "rev-parse", "--abbrev-ref", "HEAD", check=False).strip()
    return OpenedRoot(root, folder, head_commit(folder), branch)


def markdown_paths(folder: Path) -> list[str]:
    """The Markdown files of a root: tracked ones in a git work tree, else every one found."""
    if work_tree(folder) is not None:  # paths relative to the folder, even inside a larger tree
        listed = git(folder, "ls-files", "-z", "--", ".").split("\0")
        return sorted(p for p in listed if p.lower().endswith(MARKDOWN))
    return sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file()
        and p.suffix.lower() in MARKDOWN
        and not p.is_symlink()
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def _modified(path: Path) -> str:
    """YYYY-MM-DD (UTC) of the file's last modification; "" when it cannot be read."""
    import time

    try:
        return time.strftime("%Y-%m-%d", time.gmtime(path.stat().st_mtime))
    except OSError:
        return ""


def read_documents(
    opened: OpenedRoot, max_bytes: int, also: Iterable[str] = ()
) -> tuple[list[KnowledgeDocument], list[str]]:
    """The root's documents, and what could not be read (each with why); ``also`` are the
    credential values found in the compiled repository, redacted wherever a document repeats
    one."""
    paths = markdown_paths(opened.folder)
    dates = last_commits(opened.folder, paths) if opened.head else {}
    documents: list[KnowledgeDocument] = []
    problems: list[str] = []
    for path in paths:
        try:
            data = read_inside(opened.folder, path, max_bytes)
        except UnsafeRead as exc:
            problems.append(f"{opened.root.name}/{path}: {exc}")
            continue
        text = data.decode("utf-8", errors="replace")
        cleaned = redact(str(opened.folder / path), text, "markdown", also=also, where=path)
        front = parse_front_matter(cleaned.text)
        commit, date = dates.get(path, ("", ""))
        if not commit:  # outside git (or never committed): the day it was last written
            date = _modified(opened.folder / path)
        documents.append(
            KnowledgeDocument(
                opened.root.name,
                path,
                cleaned.text,
                scopes_of(path, front.scopes, opened.root.name),
                front.refs,
                commit,
                date,
                len(cleaned.findings),
                hashlib.sha256(data).hexdigest(),
            )
        )
    return documents, problems
