"""The ways kbc touches the disk: SQLite databases, and files replaced whole (the store's,
and the few a command writes into a repository, never through a link)."""

from __future__ import annotations

import os
import secrets
import sqlite3
import stat
from contextlib import suppress
from pathlib import Path, PurePosixPath

from kbc.domain.errors import PathRefused

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
LINK_HINT = "remove the link (or put the folder or file itself in its place) and run the command again"


def connect(
    path: Path, *, shared: bool = False, timeout: float = 5.0, wal: bool = True
) -> sqlite3.Connection:
    """The SQLite database at ``path`` (its folder made) in WAL mode, so readers never wait
    on a writer (``wal`` False: in the journal mode the file has, for a database that is
    written only under another name and then renamed into place, where a WAL file kept
    under the name would belong to the file replaced). ``shared``: one connection several
    threads use (their caller serialises). A file that is not a database raises
    ``sqlite3.DatabaseError``, the connection closed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=timeout, check_same_thread=not shared)
    try:
        db.execute("PRAGMA journal_mode=WAL" if wal else "PRAGMA schema_version")
    except sqlite3.DatabaseError:
        db.close()
        raise
    return db


def copy_database(source: Path, target: Path) -> None:
    """A consistent copy of the SQLite database at ``source`` (what its last commit holds, a
    writer's transaction under way left out) written to ``target``, in rollback-journal mode,
    through SQLite's backup API rather than by copying a file that may be under write."""
    target.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-journal", "-wal", "-shm"):
        target.with_name(target.name + suffix).unlink(missing_ok=True)
    origin = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True)
    try:
        copy = sqlite3.connect(target)
        try:
            origin.backup(copy)
            copy.execute("PRAGMA journal_mode=DELETE")
            copy.commit()
        finally:
            copy.close()
    finally:
        origin.close()


def write_atomic(path: Path, data: str | bytes) -> None:
    """``path`` holds ``data`` whole or keeps what it held: written beside it under a name of
    this call's own, synced, then put in its place in one rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    folder = os.open(path.parent, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        _replace(folder, path.name, data, mode=0o600)
    finally:
        os.close(folder)


def read_inside(root: Path, relative: str, max_bytes: int) -> bytes | None:
    """The regular file at ``relative`` (``/``-separated) in the folder ``root``, or None when
    there is none, each folder on the way and the file opened without following a link.
    :class:`PathRefused` when one of them is a link, not a folder or not a regular file, or
    when the file is over ``max_bytes``."""
    *folders, name = _parts(relative)
    try:
        folder = _folder(root, folders, create=False)
    except FileNotFoundError:
        return None
    try:
        try:
            handle = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC, dir_fd=folder)
        except FileNotFoundError:
            return None
        except OSError as exc:
            _refuse_link(folder, name, root / relative)
            raise PathRefused(f"{root / relative} cannot be read: {exc.strerror or exc}") from None
        with os.fdopen(handle, "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise PathRefused(f"{root / relative} is not a regular file", hint="move it aside")
            if info.st_size > max_bytes:
                raise PathRefused(
                    f"{root / relative} has {info.st_size:,} bytes, more than the {max_bytes:,} kbc reads",
                    hint="move it aside",
                )
            return file.read(max_bytes + 1)[:max_bytes]
    finally:
        os.close(folder)


def write_inside(root: Path, relative: str, data: str | bytes) -> None:
    """The file at ``relative`` (``/``-separated) in the folder ``root`` holds ``data`` whole
    or keeps what it held, written as :func:`write_atomic` writes, the folders on the way made
    as needed; no folder on the way, nor the file, is reached through a link (a link there is
    refused with :class:`PathRefused`, nothing written). A file replaced keeps its mode."""
    *folders, name = _parts(relative)
    folder = _folder(root, folders, create=True)
    try:
        _refuse_link(folder, name, root / relative)
        try:
            mode = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode & 0o777
        except FileNotFoundError:
            mode = None
        _replace(folder, name, data, mode=mode)
    finally:
        os.close(folder)


def _parts(relative: str) -> list[str]:
    parts = PurePosixPath(relative).parts
    if not parts or PurePosixPath(relative).is_absolute() or any(p in (".", "..") for p in parts):
        raise ValueError(f"{relative!r} is not a path inside a folder")
    return list(parts)


def _folder(root: Path, parts: list[str], *, create: bool) -> int:
    """An open descriptor of the folder ``parts`` below ``root``, reached one folder at a time
    without following a link (made when missing, if ``create``); FileNotFoundError when a
    folder is missing and not ``create``."""
    folder = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for index, part in enumerate(parts):
            shown = root.joinpath(*parts[: index + 1])
            if create:
                with suppress(FileExistsError):
                    os.mkdir(part, dir_fd=folder)
            try:
                inner = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=folder)
            except FileNotFoundError:
                raise
            except OSError as exc:  # a link (ELOOP), a file (ENOTDIR), a folder it may not open
                _refuse_link(folder, part, shown)
                raise PathRefused(
                    f"{shown} is not a folder ({exc.strerror or exc})", hint="move it aside"
                ) from None
            os.close(folder)
            folder = inner
    except BaseException:
        os.close(folder)
        raise
    return folder


def _refuse_link(folder: int, name: str, shown: Path) -> None:
    """:class:`PathRefused` if ``name`` in the open ``folder`` is a link."""
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        try:
            target = f" (to {os.readlink(name, dir_fd=folder)})"
        except OSError:
            target = ""
        raise PathRefused(
            f"{shown} is a link{target}: kbc reads and writes no file of a repository through a link",
            hint=LINK_HINT,
        )


def _replace(folder: int, name: str, data: str | bytes, *, mode: int | None) -> None:
    """``name`` in the open ``folder`` holds ``data`` whole or keeps what it held: written to a
    file of this call's own beside it (created new, never through a link), synced, then renamed
    into place (a link there is replaced, never followed). ``mode``: the new file's permission
    bits (None: what the umask leaves of 0o666)."""
    content = data.encode("utf-8") if isinstance(data, str) else data
    while True:
        temporary = f".{name}.{secrets.token_hex(4)}.tmp"
        try:
            handle = os.open(
                temporary,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC,
                0o666 if mode is None else mode,
                dir_fd=folder,
            )
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(handle, "wb") as out:
            if mode is not None:
                os.fchmod(out.fileno(), mode)  # the umask left out of it
            out.write(content)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary, dir_fd=folder)
        raise
