"""The repository-wide credential sweep, before any file is analyzed or indexed.

A credential found in one file (``password = "…"`` in the settings) may be
repeated where no detector could know it for one (a sentence of the setup
guide). The sweep collects every file's own credential values, then finds
each one wherever else it appears, so the passes after it redact it there too.

Values live only in memory. The caller keeps, per file content, how many
credentials it holds (the analysis cache), so a later build rescans only
changed files and the few that hold one. A file with none is **clean**: the
passes after the sweep (analysis, chunking) do not scan it again, and only
replace the values found elsewhere that appear in it. The sweep reads each file
as they do (Python by its coding cookie), so its count is theirs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from kbc.analyzers.pool import POOL_MIN_FILES, pool_context, worker_init
from kbc.analyzers.python.encoding import decode_source
from kbc.analyzers.secrets import own_credentials, present
from kbc.domain.models import SourceFile
from kbc.domain.progress import PassReport, Tick, counted

SWEEP_VERSION = "4"  # 2: short hex strings in code found too; 3: every finding counted; 4: judged


@dataclass(frozen=True, slots=True)
class Sweep:
    """path -> the values found in other files that appear in this one."""

    repeated: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    values: frozenset[str] = frozenset()  # every value found in the repository's files
    clean: frozenset[str] = frozenset()  # paths where the detectors find nothing themselves

    def also(self, path: str) -> tuple[str, ...]:
        return self.repeated.get(path, ())


def sweep_key(source: SourceFile) -> str:
    """What a file's credential count is kept under: its path, content and language."""
    raw = "\0".join((SWEEP_VERSION, source.path, source.blob, source.language))
    return hashlib.sha256(raw.encode()).hexdigest()


def read_text(path: Path, language: str = "") -> str | None:
    """A file's text as the passes after the sweep read it: Python as the interpreter does,
    anything else as UTF-8 with undecodable bytes replaced."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return decode_source(data)[0] if language == "python" else data.decode("utf-8", errors="replace")


def _credentials(item: tuple[str, str, str]) -> tuple[str, frozenset[str], int]:
    path, abspath, language = item
    text = read_text(Path(abspath), language)
    if text is None:
        return path, frozenset(), -1  # unread: never clean, read again by every later pass
    if not text:
        return path, frozenset(), 0
    values, count = own_credentials(abspath, text, language, where=path)
    return path, frozenset(values), count


def own_credentials_of(
    root: Path, files: Sequence[tuple[str, str]], workers: int, tick: Tick | None = None
) -> dict[str, tuple[frozenset[str], int]]:
    """Each of ``files`` ((path, language)) with the credential values it holds itself and how
    many credentials the detectors find in it; ``tick`` hears each file scanned."""
    items = [(path, str(root / path), language) for path, language in files]
    if workers <= 1 or len(items) < POOL_MIN_FILES:
        found = list(counted(map(_credentials, items), tick))
    else:
        with ProcessPoolExecutor(
            max_workers=workers, mp_context=pool_context(), initializer=worker_init
        ) as pool:
            found = list(counted(pool.map(_credentials, items, chunksize=16), tick))
    return {path: (values, count) for path, values, count in found}


def own_values(root: Path, files: Sequence[tuple[str, str]], workers: int) -> dict[str, frozenset[str]]:
    """Each of ``files`` ((path, language)) with the credential values it holds itself."""
    return {path: values for path, (values, _) in own_credentials_of(root, files, workers).items()}


def repeated_in(text: str, values: set[str], own: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The ``values`` that appear in ``text`` and are not among its ``own``."""
    return tuple(sorted(present(text, values - own)))


def sweep_secrets(
    root: Path,
    files: Sequence[SourceFile],
    counts: Mapping[str, int],
    workers: int,
    progress: PassReport | None = None,
) -> tuple[Sweep, dict[str, int]]:
    """The sweep over ``files``, given ``counts`` (``sweep_key`` -> credentials found, from an
    earlier build); also the counts of the files scanned now, to keep for the next one.
    ``progress`` hears each file scanned (those known to hold none are skipped)."""
    keys = {f.path: sweep_key(f) for f in files}
    wanted = [(f.path, f.language) for f in files if counts.get(keys[f.path]) != 0]
    if progress is not None:
        progress.skip(len(files) - len(wanted))
    credentials = own_credentials_of(root, wanted, workers, progress.advance if progress else None)
    found = {path: values for path, (values, _) in credentials.items()}
    scanned = {keys[path]: count for path, (_, count) in credentials.items()}
    known = {**counts, **scanned}
    clean = frozenset(f.path for f in files if known.get(keys[f.path]) == 0)
    everything = {value for values in found.values() for value in values}
    if not everything:
        return Sweep(clean=clean), scanned
    repeated: dict[str, tuple[str, ...]] = {}
    for source in files:
        text = read_text(root / source.path, source.language)
        if text is None:
            continue
        also = repeated_in(text, everything, found.get(source.path, frozenset()))
        if also:
            repeated[source.path] = also
    return Sweep(repeated, frozenset(everything), clean), scanned
