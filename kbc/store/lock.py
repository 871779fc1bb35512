"""One writer per store: an advisory lock on ``<store>/lock`` (flock), released when the
process exits, so a killed writer never leaves a stale lock behind."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from kbc.domain.errors import LockTimeout
from kbc.store.layout import fill_lock_file, lock_file

POLL_SECONDS = 0.2
IN_USE = ".in-use"  # in a folder read by a process (a publication served), locked shared
_HELD: set[int] = set()  # lock descriptors this process holds (a forked worker inherits them)


def forget_inherited_locks() -> None:
    """In a forked worker: drop the parent's lock descriptors, so that a parent killed
    mid-build releases the store at once instead of when its last worker exits."""
    for handle in list(_HELD):
        try:
            os.close(handle)
        except OSError:
            pass
    _HELD.clear()


def _holder(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return ""
    return f" (pid {text})" if text else ""


@contextmanager
def writer_lock(
    store_root: Path, timeout: float, on_wait: Callable[[str], None] | None = None
) -> Iterator[float]:
    """Hold the store's writer lock; yields the seconds spent waiting for it.

    Waits up to ``timeout`` seconds for another writer, telling ``on_wait`` once that
    it waits; past the timeout raises :class:`LockTimeout` saying who holds it.
    """
    store_root.mkdir(parents=True, exist_ok=True)
    path = lock_file(store_root)
    handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    started = time.monotonic()
    told = False
    try:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                waited = time.monotonic() - started
                if waited >= timeout:
                    raise LockTimeout(
                        f"gave up after {waited:.0f} s waiting for another kbc writer{_holder(path)} "
                        f"on {store_root}",
                        hint="let it finish, or raise --lock-timeout (KBC_LOCK_TIMEOUT)",
                    ) from None
                if not told and on_wait is not None:
                    on_wait(f"waiting for another kbc writer{_holder(path)} on {store_root}")
                    told = True
                time.sleep(POLL_SECONDS)
        waited = time.monotonic() - started
        os.ftruncate(handle, 0)
        os.write(handle, str(os.getpid()).encode())
        _HELD.add(handle)
        try:
            yield waited
        finally:
            _HELD.discard(handle)
            os.ftruncate(handle, 0)
            fcntl.flock(handle, fcntl.LOCK_UN)
    finally:
        os.close(handle)


@contextmanager
def fill_lock(store_root: Path, held: int | None = None) -> Iterator[None]:
    """Hold the lock of the process filling in vectors, waiting for the one holding it;
    ``held``: a descriptor of the lock file already locked for this process (by the one that
    started it, so that the store shows it running from the start)."""
    handle = held if held is not None else os.open(fill_lock_file(store_root), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)  # on a descriptor already locked: holds it still
        _HELD.add(handle)
        try:
            yield
        finally:
            _HELD.discard(handle)
            fcntl.flock(handle, fcntl.LOCK_UN)
    finally:
        os.close(handle)


def take_fill_lock(store_root: Path) -> int | None:
    """A descriptor of the fill lock, locked, for a process about to be started to inherit;
    None when another process holds it."""
    handle = os.open(fill_lock_file(store_root), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(handle)
        return None
    return handle


def filling(store_root: Path) -> bool:
    """Whether a process fills in vectors now (holds the fill lock, or waits for it)."""
    path = fill_lock_file(store_root)
    if not path.is_file():
        return False
    handle = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False
    finally:
        os.close(handle)


def hold_shared(folder: Path) -> int:
    """A descriptor holding a shared lock on ``<folder>/.in-use`` for as long as it is open: the
    folder is being read, and :func:`remove_unless_held` leaves it alone."""
    handle = os.open(folder / IN_USE, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(handle, fcntl.LOCK_SH)
    return handle


def remove_unless_held(folder: Path) -> bool:
    """Remove ``folder`` unless a process holds it (:func:`hold_shared`); True when removed."""
    import shutil

    try:
        handle = os.open(folder / IN_USE, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return False
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    else:
        shutil.rmtree(folder, ignore_errors=True)
        return True
    finally:
        os.close(handle)
