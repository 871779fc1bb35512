"""discover: the text files of a repository that later passes read.

In a git work tree the candidates are ``git ls-files`` (tracked files); in a
plain directory they come from a walk that honours the root ``.gitignore`` and
skips the usual tool folders. Binary, oversized, excluded and symlinked files
are skipped with a reason, never fatal.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from kbc.analyzers.gitrepo import git, head_commit, work_tree
from kbc.analyzers.roles import compiled_paths, file_role
from kbc.domain.errors import TargetError
from kbc.domain.models import Inventory, SkippedPath, SourceFile

BINARY_SNIFF_BYTES = 8000

# Folders a plain-directory walk never enters (a git work tree already leaves them out).
WALK_SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".kbc",
        "__pycache__",
        "node_modules",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".eggs",
    }
)

LANGUAGES = {
    ".py": "python",
    ".pyw": "python",
    ".pyi": "python-stub",
    ".md": "markdown",
    ".markdown": "markdown",
    ".rst": "rst",
    ".txt": "text",
    ".toml": "toml",
    ".cfg": "ini",
    ".ini": "ini",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".jsx": "javascript",
    ".html": "html",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".css": "css",
    ".sh": "shell",
    ".sql": "sql",
    ".c": "c",
    ".h": "c",
    ".rs": "rust",
    ".go": "go",
    ".java": "java",
}


def git_blob_id(data: bytes) -> str:
    """The id git gives ``data`` as a blob, so a clean file's id equals ``git ls-files -s``."""
    digest = hashlib.sha1(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


# A `.h` header is Objective-C when its opening declares an Objective-C interface, protocol or
# class, or imports a header (neither C's grammar nor C++'s reads it, so it keeps line windows);
# else C++ when it shows C++ (a class, namespace or template, a standard header without a
# suffix, `std::`, a `using`): headers are shared by both languages' files. The opening is the
# first LANGUAGE_HEAD bytes, past a long licence.
LANGUAGE_HEAD = 16384
_OBJC_HEADER = re.compile(
    rb"^\s*(?:@(?:interface|protocol|class|implementation)\b|#\s*import\s*[<\"])", re.MULTILINE
)
_CPP_HEADER = re.compile(
    rb"^\s*(?:namespace\s+\w|class\s+\w+\s*[:{]|template\s*<|#\s*include\s*<[a-z_]+>|using\s+[\w:]+::)"
    rb"|std::",
    re.MULTILINE,
)


def line_count(data: bytes) -> int:
    """The lines of a file's bytes, a last line without its newline counted."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def language_of(path: str, head: bytes) -> str:
    suffix = os.path.splitext(path)[1].lower()
    if suffix == ".h" and _OBJC_HEADER.search(head):
        return "objective-c"
    if suffix == ".h" and _CPP_HEADER.search(head):
        return "cpp"
    if suffix in LANGUAGES:
        return LANGUAGES[suffix]
    if not suffix and head.startswith(b"#!") and b"python" in head.split(b"\n", 1)[0]:
        return "python"
    return "text"


def _git_candidates(root: Path, store_prefix: str = "") -> tuple[list[tuple[str, str]], int, str] | None:
    """(mode, path) of tracked files, the ignored count and HEAD; None if not a work tree."""
    if work_tree(root) is None:
        return None
    entries: dict[str, str] = {}
    for record in git(root, "ls-files", "-s", "-z").split("\0"):
        if not record:
            continue
        meta, path = record.split("\t", 1)
        entries.setdefault(path, meta.split(" ", 1)[0])
    ignored_out = git(root, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")
    # kbc's own store is not the repository's: whether it exists yet must not change the count.
    ignored = sum(
        1 for p in ignored_out.split("\0") if p and not (store_prefix and (p + "/").startswith(store_prefix))
    )
    return sorted((mode, path) for path, mode in entries.items()), ignored, head_commit(root)


def _walk_candidates(root: Path, store_prefix: str = "") -> tuple[list[tuple[str, str]], int]:
    import pathspec

    spec = None
    gitignore = root / ".gitignore"
    if gitignore.is_file():
        lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
    found: list[tuple[str, str]] = []
    ignored = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
        keep = []
        for name in sorted(dirnames):
            rel = rel_dir + name
            if store_prefix and rel + "/" == store_prefix:
                continue  # kbc's own store: neither listed nor counted
            if name in WALK_SKIP_DIRS or name.endswith(".egg-info"):
                ignored += 1
            elif spec is not None and spec.match_file(rel + "/"):
                ignored += 1
            elif os.path.islink(os.path.join(dirpath, name)):
                found.append(("120000", rel))
            else:
                keep.append(name)
        dirnames[:] = keep
        for name in filenames:
            rel = rel_dir + name
            if spec is not None and spec.match_file(rel):
                ignored += 1
                continue
            found.append(("100644", rel))
    return sorted(found, key=lambda e: e[1]), ignored


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def _classify(root: Path, rel: str, mode: str, max_bytes: int) -> SourceFile | SkippedPath:
    full = root / rel
    if mode == "160000":
        return SkippedPath(rel, "submodule", "a git submodule; analyze it on its own")
    if full.is_symlink() or mode == "120000":
        try:
            target = Path(os.path.realpath(full, strict=True))
        except OSError as exc:
            return SkippedPath(rel, "broken-symlink", exc.strerror or "cannot be resolved")
        if not _inside(target, root):
            return SkippedPath(rel, "symlink-outside", f"points outside the repository, to {target}")
        return SkippedPath(rel, "symlink", f"points to {target.relative_to(root).as_posix()}")
    resolved = Path(os.path.realpath(full))
    if not _inside(resolved, root):  # a folder on its path is a link that leaves the repository
        return SkippedPath(
            rel,
            "symlink-outside",
            f"a folder on its path points outside the repository, to {resolved.parent}",
        )
    try:
        size = full.stat().st_size
    except FileNotFoundError:
        return SkippedPath(rel, "missing", "tracked but absent from the work tree")
    except OSError as exc:
        return SkippedPath(rel, "unreadable", exc.strerror or str(exc))
    if not full.is_file():
        return SkippedPath(rel, "missing", "not a regular file")
    if size > max_bytes:
        return SkippedPath(rel, "oversized", f"{size} bytes, over the {max_bytes}-byte cap")
    try:
        data = full.read_bytes()
    except OSError as exc:
        return SkippedPath(rel, "unreadable", exc.strerror or str(exc))
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return SkippedPath(rel, "binary", "holds NUL bytes")
    lines = line_count(data)
    language = language_of(rel, data[:LANGUAGE_HEAD])
    return SourceFile(rel, len(data), git_blob_id(data), language, lines, file_role(rel, language, data))


class UnsafeRead(Exception):
    """A file that may not be read as the repository's: it leads outside it, or is not a
    regular file (a FIFO, device or socket), or is too large."""


def read_inside(root: Path, relative: str, max_bytes: int) -> bytes:
    """The bytes of ``root/relative`` as it is now, read only if it is a regular file inside
    the repository: what a build found there may have been swapped since for a symlink out of
    it (refused, at any component), a FIFO (opened without blocking, then refused) or a device."""
    import stat

    base = Path(os.path.realpath(root))
    target = base / relative
    if not _inside(Path(os.path.realpath(target)), base):
        raise UnsafeRead(f"{relative} now leads outside the repository")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        handle = os.open(target, flags)
    except OSError as exc:
        raise UnsafeRead(f"{relative} cannot be opened: {exc.strerror or exc}") from None
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeRead(f"{relative} is no longer a regular file")
        if info.st_size > max_bytes:
            raise UnsafeRead(f"{relative} has grown to {info.st_size} bytes, over the {max_bytes}-byte cap")
        with os.fdopen(handle, "rb", closefd=False) as fh:
            return fh.read(max_bytes + 1)[:max_bytes]
    finally:
        os.close(handle)


def _utf8(path: str) -> bool:
    """Whether a path (decoded by Python with surrogate escapes) is valid UTF-8 text: a name
    that is not cannot be stored, indexed or cited as text."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _excluded(paths: Iterable[str], patterns: Sequence[str]) -> set[str]:
    if not patterns:
        return set()
    import pathspec

    spec = pathspec.GitIgnoreSpec.from_lines(patterns)
    return {p for p in paths if spec.match_file(p)}


def discover(
    root: Path, *, max_file_bytes: int, exclude: Sequence[str] = (), store_dir: Path | None = None
) -> Inventory:
    """List the text files under ``root`` with the paths skipped and why."""
    root = root.resolve()
    if not root.is_dir():
        raise TargetError(f"{root} is not a directory", hint="pass the path of a repository")
    store_prefix = ""
    if store_dir is not None and _inside(store_dir.resolve(), root):
        store_prefix = store_dir.resolve().relative_to(root).as_posix() + "/"
    git_view = _git_candidates(root, store_prefix)
    if git_view is not None:
        candidates, ignored, commit = git_view
        vcs = "git"
    else:
        candidates, ignored = _walk_candidates(root, store_prefix)
        vcs, commit = "none", ""
    excluded = _excluded((p for _, p in candidates), exclude)
    files: list[SourceFile] = []
    skipped: list[SkippedPath] = []
    for mode, rel in candidates:
        if not _utf8(rel):
            printable = rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            skipped.append(
                SkippedPath(printable, "bad-name", "its name is not UTF-8; rename it to have it analyzed")
            )
            continue
        if store_prefix and rel.startswith(store_prefix):
            skipped.append(SkippedPath(rel, "excluded", "inside kbc's store"))
            continue
        if rel in excluded:
            skipped.append(SkippedPath(rel, "excluded", "matches discover.exclude"))
            continue
        result = _classify(root, rel, mode, max_file_bytes)
        if isinstance(result, SourceFile):
            files.append(result)
        else:
            skipped.append(result)
    compiled = compiled_paths(f.path for f in files)
    files = [replace(f, role="generated") if f.path in compiled and f.role == "source" else f for f in files]
    return Inventory(str(root), vcs, commit, tuple(files), tuple(skipped), ignored)
