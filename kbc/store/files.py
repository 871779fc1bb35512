"""The two ways the store touches the disk: SQLite databases and files replaced whole."""

from __future__ import annotations

import os
import sqlite3
import tempfile
from pathlib import Path


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


def write_atomic(path: Path, data: str | bytes) -> None:
    """``path`` holds ``data`` whole or keeps what it held: written beside it under a name of
    this process's own, synced, then put in its place in one rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data.encode("utf-8") if isinstance(data, str) else data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    finally:
        Path(temporary).unlink(missing_ok=True)
