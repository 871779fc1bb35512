"""Serving a file's lines: what the knowledge base may hand out, read as it is now, redacted.

Tracked text files and the knowledge documents the build indexed are served, every path
confined to its repository or root, and what is read is redacted again (the file may have
changed since it was indexed): a credential in a module is replaced by the mark, as it is in a
slice. Only files that are secrets by nature (``.env``, key stores, private keys, a tool's
credentials) are refused whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path, PurePosixPath

from kbc.analyzers.secret_places import secret_by_nature
from kbc.domain.errors import KbcError, PathRefused
from kbc.domain.models import KNOWLEDGE_PREFIX
from kbc.services.reads import FileLines
from kbc.services.team import Manifest
from kbc.store.facts_store import FactsStore
from kbc.store.layout import lexical_path

MAX_FILE_LINES = 2000  # lines served by one call


def tracked_files(store_root: Path, root: Path) -> dict[str, tuple[int, str]]:
    """Path -> (credentials found, language) of every tracked file of the last build."""
    from kbc.index.lexical import LexicalIndex

    store = FactsStore(store_root)
    secrets = {f.path: len(f.secrets) for f in store.facts()}
    lexical_file = lexical_path(store_root)
    if lexical_file.is_file():
        lexical = LexicalIndex(lexical_file)
        try:
            for record_path, record in lexical.files().items():
                secrets[record_path] = max(secrets.get(record_path, 0), record.secrets)
        finally:
            lexical.close()
    return {f.path: (secrets.get(f.path, 0), f.language) for f in store.inventory(str(root)).files}


def confine(path: str, tracked: dict[str, tuple[int, str]]) -> tuple[str, str]:
    """The clean relative path of a tracked file that may be served, and its language: any but
    a file that is a secret by nature (a file holding a credential is served redacted)."""
    if not path or "\0" in path:
        raise PathRefused("an empty path is not a file of the repository")
    pure = PurePosixPath(path.replace("\\", "/"))
    if pure.is_absolute() or path.startswith("~"):
        raise PathRefused(
            f"{path}: absolute paths are refused", hint="give a path relative to the repository"
        )
    if ".." in pure.parts:
        raise PathRefused(
            f"{path}: paths that climb out with '..' are refused", hint="give a path inside the repository"
        )
    clean = pure.as_posix().removeprefix("./")
    if clean not in tracked:
        raise PathRefused(
            f"{clean}: not a tracked text file of the repository (untracked, ignored, binary or missing)",
            hint="search or list_views shows the paths it knows",
        )
    nature = secret_by_nature(clean)
    if nature is not None:
        raise PathRefused(
            f"{clean}: {nature} holds secrets by nature, so it is not served",
            hint="read it in the repository itself",
        )
    return clean, tracked[clean][1]


def read_redacted(
    folder: Path,
    relative: str,
    language: str,
    max_bytes: int,
    *,
    also: Iterable[str] = (),
    hint: str = "run `kbc refresh`",
) -> str:
    """``folder/relative`` as it is now (a regular file inside ``folder``), redacted."""
    from kbc.analyzers.discover import UnsafeRead, read_inside
    from kbc.analyzers.secrets import redact

    try:
        data = read_inside(folder, relative, max_bytes)
    except UnsafeRead as exc:
        raise PathRefused(f"{exc}; it is not served", hint=hint) from None
    text = data.decode("utf-8", errors="replace")
    return redact(str(folder / relative), text, language, also=also, where=relative).text


def knowledge_text(manifest: Manifest, path: str, max_bytes: int, also: Iterable[str] = ()) -> str:
    """A knowledge document the last build indexed, read from its root now, redacted with the
    repository's credential values too (``also``), as its chunks are."""
    record = manifest.documents.get(path)
    root = manifest.root(record.root) if record is not None else None
    if record is None or root is None:
        raise PathRefused(
            f"{path}: not a document of a knowledge root",
            hint="`kbc scopes` lists the roots; search finds their documents",
        )
    return read_redacted(Path(root.folder), record.path, "markdown", max_bytes, also=also)


def lines_of(path: str, text: str, start: int | None, end: int | None) -> FileLines:
    """Lines ``start``-``end`` of ``text`` (at most MAX_FILE_LINES), as get_file returns them
    (:func:`kbc.index.chunks.readable`: as slices show them)."""
    from kbc.index.chunks import readable

    lines = readable(text).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    first = max(1, start or 1)
    last = min(len(lines), end or len(lines), first + MAX_FILE_LINES - 1)
    if first > max(len(lines), 1):
        raise KbcError(f"{path} has {len(lines)} lines; line {first} is past its end")
    return FileLines(
        path=path,
        start_line=first,
        end_line=last,
        lines=len(lines),
        text="\n".join(lines[first - 1 : last]) + ("\n" if last >= first else ""),
    )


def within_budget(found: FileLines, budget: int, count: Callable[[str], int]) -> FileLines:
    """``found`` (as :func:`lines_of` gives it) cut to the lines that fit in ``budget`` tokens,
    from its first; ``truncated`` says whether any were left out."""
    if budget < 1:
        raise KbcError(f"budget {budget} is too small", hint="give a budget of 1 token or more")
    text = found.text
    if count(text) <= budget:
        return replace(found, truncated=False)
    kept: list[str] = []
    spent = 0
    for line in text.splitlines(keepends=True):
        cost = count(line)
        if spent + cost > budget:
            break
        kept.append(line)
        spent += cost
    return replace(found, end_line=found.start_line + len(kept) - 1, text="".join(kept), truncated=True)


def read_lines(
    root: Path,
    manifest: Manifest,
    tracked: Callable[[], dict[str, tuple[int, str]]],
    values: Callable[[], set[str]],
    path: str,
    start: int | None,
    end: int | None,
    max_bytes: int,
) -> FileLines:
    """Lines ``start``-``end`` of a tracked file of ``root`` or of a knowledge document, read now
    and redacted; anything else (traversal, absolute, untracked or ignored paths, files that are
    secrets by nature) is refused. ``tracked`` and ``values`` give the last build's tracked
    files and the credential values of the files that hold some (read when asked)."""
    if path.startswith(KNOWLEDGE_PREFIX):
        return lines_of(path, knowledge_text(manifest, path, max_bytes, also=values()), start, end)
    clean, language = confine(path, tracked())
    # Redacted with the credentials the files that hold them hold now, as indexing does.
    text = read_redacted(
        root,
        clean,
        language,
        max_bytes,
        also=values(),
        hint="run `kbc refresh` once the work tree is as it should be",
    )
    return lines_of(clean, text, start, end)
