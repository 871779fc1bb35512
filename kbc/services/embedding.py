"""`kbc embed`: fill in the vectors a build left to embed, and the background process that does it.

A build with more units to embed than ``index.wait_units`` publishes its index lexical and
starts ``kbc embed --background`` in a process of its own: niced, its model on one thread
(a core stays free for queries), resumable (a killed run's batches are kept), one at a time
per store. ``kbc embed`` in the foreground does the same work at full speed. Retrieval
turns hybrid when the index is published again with every unit's vector.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kbc.domain.errors import KbcError
from kbc.domain.fields import FIELDS
from kbc.domain.settings import Settings, environment_with
from kbc.index.embed import Embedder
from kbc.index.lexical import PENDING
from kbc.index.progress import LATER
from kbc.index.vectors import VectorStore
from kbc.services.components import CONFIGURED, Components
from kbc.store.layout import index_dir, store_path
from kbc.store.lock import fill_lock, filling, take_fill_lock, writer_lock
from kbc.store.state import read_state, write_state

LOG = "embedding.log"  # the background process's output, in the store
ROUNDS = 5  # a build publishing again while the vectors are embedded sends the work round again
NICENESS = 10


@dataclass(frozen=True, slots=True)
class FillSummary:
    units: int  # of the index filled (0: it waited for nothing)
    embedded: int  # embedded by this run
    retrieval: str  # what the store's retrieval is now
    seconds: float


def fill_vectors(  # noqa: PLR0913 - what `kbc embed` is given, passed by name
    root: Path,
    settings: Settings,
    store_dir: Path | None = None,
    *,
    background: bool = False,
    lock: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    on_wait: Callable[[str], None] | None = None,
    components: Components = CONFIGURED,
    before: Callable[[], None] | None = None,
) -> FillSummary:
    """Embed the units the live index waits for, then publish it hybrid. ``background``:
    niced, the model on one thread; ``lock``: a descriptor of the fill lock it was started
    holding; ``before``: what to do first, holding the fill lock (the passes a first index
    waits for, :mod:`kbc.services.later`)."""
    started = time.perf_counter()
    store_root = store_path(root, settings, store_dir)
    where = index_dir(store_root)
    if background:
        try:
            os.nice(NICENESS)
        except OSError:
            pass
    from kbc.index.fill import embed_pending, pending_of, publish_filled

    embedded = 0
    with fill_lock(store_root, lock):
        if before is not None:
            before()
        for _ in range(ROUNDS):
            with writer_lock(store_root, settings.lock_timeout, on_wait):
                pending = pending_of(where, settings.embed_tests)
                if pending is None:
                    mode = _meta(where, "retrieval") or "none"
                    return FillSummary(0, embedded, mode, time.perf_counter() - started)
                embedder, vectors = _opened(components, store_root, root, settings, pending.model, background)
                present = vectors.ids()
            embedded += embed_pending(where, pending, embedder, present, progress)
            with writer_lock(store_root, settings.lock_timeout, on_wait):
                _, store = _opened(components, store_root, root, settings, pending.model, True)
                if publish_filled(where, pending, store):
                    state = read_state(store_root)
                    if state is not None:  # a new build record: servers following the store reopen it
                        write_state(store_root, state)
                    return FillSummary(len(pending.units), embedded, "hybrid", time.perf_counter() - started)
    raise KbcError(
        f"the index changed {ROUNDS} times while its vectors were embedded",
        hint="run `kbc embed` again once builds have stopped",
    )


def _opened(
    components: Components, store_root: Path, root: Path, settings: Settings, model: str, background: bool
) -> tuple[Embedder, VectorStore]:
    """The embedder (on one thread for ``background``) and vector store for ``model``."""
    embedder, vectors, why = components.open_embedding(store_root, root, settings, lazy=background)
    if embedder is None or vectors is None:
        raise KbcError(
            f"the index waits for vectors of {model}, but no model loads: {why}",
            hint="fix the embedding settings and run `kbc embed`, or build again",
        )
    if embedder.model_id != model:
        raise KbcError(
            f"the index waits for vectors of {model}, but the model configured is {embedder.model_id}",
            hint="run `kbc build` to index for the configured model",
        )
    return embedder, vectors


def resume_filling(root: Path, settings: Settings, store_dir: Path | None = None) -> int:
    """Start the background process when the live index waits for vectors or facts and no
    process is filling them in (say, it was killed): its pid, else 0 (-1: it could not be
    started)."""
    store_root = store_path(root, settings, store_dir)
    if not store_root.is_dir() or filling(store_root):
        return 0
    if not _meta(index_dir(store_root), PENDING) and not waits_for_facts(store_root):
        return 0
    return start_filling(root, settings, store_dir)


def waits_for_vectors(store_root: Path) -> bool:
    """Whether the store's live index waits for vectors (a build left them to embed)."""
    return bool(_meta(index_dir(store_root), PENDING))


def waits_for_facts(store_root: Path) -> str:
    """The passes the store's live index waits for: a first index's facts, views and team
    knowledge ("" when none, :mod:`kbc.services.first`)."""
    return _meta(index_dir(store_root), LATER)


def _meta(where: Path, key: str) -> str:
    """A meta value of the live index ("" when there is no readable index)."""
    from kbc.index.lexical import LexicalIndex
    from kbc.store.layout import LEXICAL

    if not (where / LEXICAL).is_file():
        return ""
    try:
        lexical = LexicalIndex(where / LEXICAL)
    except KbcError:
        return ""
    try:
        return lexical.meta(key)
    finally:
        lexical.close()


# The settings the embedding process must share with the build that starts it, passed as
# the environment variables that set them (above the repository's own configuration); those
# after the first line shape what the build after a first index writes (kbc.services.first).
SHARED = {
    "embed_model": "KBC_EMBED_MODEL",
    "embed_tokens": "KBC_EMBED_TOKENS",
    "embed_api_base": "KBC_EMBED_API_BASE",
    "llm_api_key": "KBC_LLM_API_KEY",
    "embed_tests": "KBC_EMBED_TESTS",
    "cache_dir": "KBC_CACHE_DIR",
    "chroma_url": "KBC_CHROMA_URL",
    "lock_timeout": "KBC_LOCK_TIMEOUT",
    **{
        f.name: f.env
        for f in FIELDS
        if f.name
        in (
            "max_file_bytes",
            "exclude",
            "source_roots",
            "module_split_files",
            "max_modules",
            "chunk_lines",
            "chunk_overlap",
            "workflow_depth",
            "max_workflows",
            "max_api_workflows",
            "llm_model",
            "llm_api_base",
            "workers",
        )
    },
}


def _as_variable(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(map(str, value))
    return str(value)


def start_filling(root: Path, settings: Settings, store_dir: Path | None = None) -> int:
    """Start ``kbc embed --background`` for the store in a process of its own session (it
    outlives this one); its output goes to the store's ``embedding.log``. Returns its pid, or
    -1 when none could be started (the index stays lexical, waiting for `kbc embed`)."""
    store_root = store_path(root, settings, store_dir)
    shared = {variable: _as_variable(getattr(settings, name)) for name, variable in SHARED.items()}
    env = environment_with(shared)
    # -P: the working folder is not put on the module path (a repository may hold a `kbc` of its own)
    command = [
        sys.executable,
        "-P",
        "-m",
        "kbc",
        "embed",
        "--repo",
        str(root.resolve()),
        "--store",
        str(store_root.resolve()),
        "--background",
    ]
    # The fill lock is taken here and handed down, so the store shows the process running from
    # the moment the build returns. While another process holds it, the one started waits for
    # it (and finds nothing to do if that one took the new index's units too).
    held = take_fill_lock(store_root)
    passed = () if held is None else (held,)
    if held is not None:
        command += ["--lock", str(held)]
    try:
        with (store_root / LOG).open("ab") as log:
            # Started through a launcher that exits at once: the process is nobody's child to reap
            # (nor a subprocess this one must wait for), and outlives the command that started it.
            launcher = [sys.executable, "-P", "-c", LAUNCHER, *map(str, passed), "--", *command]
            launched = subprocess.run(
                launcher,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                env=env,
                cwd=store_root,
                check=False,
                timeout=60,
                pass_fds=passed,
            )
        return int(launched.stdout.decode().strip())
    except (OSError, ValueError, subprocess.SubprocessError):
        return -1
    finally:
        if held is not None:
            os.close(held)  # the process started keeps the lock


LAUNCHER = """import subprocess, sys
split = sys.argv.index("--")
log = open("embedding.log", "ab")
child = subprocess.Popen(sys.argv[split + 1:], stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                         start_new_session=True, close_fds=True, pass_fds=tuple(map(int, sys.argv[1:split])))
print(child.pid)
"""
