"""The chunk pass's work on one file: read, redact, cut at definitions (or line windows), count.

A file's definitions come from its facts (libcst's) when the facts pass has read it; the
first index a build publishes before the facts pass (:mod:`kbc.services.first`) takes a
Python file's definitions from ``ast`` instead (:mod:`kbc.analyzers.python.outline`), read
the way the facts read them and scrubbed of the credentials the redaction takes out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from kbc.analyzers.pool import pool_context, worker_init
from kbc.analyzers.python.encoding import decode_source
from kbc.analyzers.python.outline import outline
from kbc.analyzers.secrets import redact, scrub
from kbc.domain.errors import in_pass
from kbc.domain.models import Chunk, ChunkKind, FileFacts, SourceFile
from kbc.domain.progress import Tick, counted
from kbc.index.chunks import chunk_text, knowledge_chunks, readable
from kbc.index.definitions import Definition
from kbc.index.lexical import indexed_columns
from kbc.index.tokencount import default_counter

POOL_MIN_FILES = 64


@dataclass(frozen=True, slots=True)
class ChunkTask:
    path: str
    abspath: str
    language: str
    module: str
    definitions: tuple[Definition, ...] | None  # parsed code's definitions; None: line windows
    scan: bool  # False when the analyzer already scanned this blob and found nothing
    size: int
    overlap: int
    also: tuple[str, ...] = ()  # credentials found in other files: redacted here too
    role: str = ""  # the file's role as discovery read it ("": from its path)
    outlined: bool = False  # Python without facts: cut at the definitions ``ast`` reads


Columns = tuple[str, str, str, str]  # a chunk's lexical index columns (kbc.index.lexical)
Prepared = tuple[str, list[Chunk], int, list[Columns]]  # path, chunks, credentials redacted, columns


def prepare(task: ChunkTask) -> Prepared:
    """Read, redact and chunk one file, and tokenize its chunks for the lexical index (runs
    in a worker process)."""
    with in_pass("index", task.path):
        return _prepare(task)


def _prepare(task: ChunkTask) -> Prepared:
    try:
        data = Path(task.abspath).read_bytes()
    except OSError:
        return task.path, [], 0, []
    if task.language == "python":
        text, _ = decode_source(data)
    else:
        text = data.decode("utf-8", errors="replace")
    secrets = 0
    removed: tuple[str, ...] = ()
    definitions = task.definitions
    if task.outlined:
        definitions = _outlined(text, task.module)
    if task.scan or task.also:
        redaction = redact(task.abspath, text, task.language, also=task.also, where=task.path)
        text, secrets, removed = redaction.text, len(redaction.findings), tuple(redaction.removed)
    if definitions and removed:  # no signature carries a credential the text no longer does
        definitions = scrub(definitions, removed)
    chunks = chunk_text(
        task.path,
        readable(text),
        task.language,
        size=task.size,
        overlap=task.overlap,
        module=task.module,
        definitions=definitions,
        role=task.role or None,
    )
    counter = default_counter()
    counted = [dataclasses.replace(c, tokens=counter.count(c.text)) for c in chunks]
    return task.path, counted, secrets, [indexed_columns(c) for c in counted]


def _outlined(text: str, module: str) -> tuple[Definition, ...] | None:
    """The definitions ``ast`` reads in a Python file, as the chunker takes them."""
    found = outline(text, module)
    if found is None:
        return None
    return tuple(Definition(d.qname, d.name, d.kind, d.start, d.end, d.signature, d.is_async) for d in found)


def chunk_tasks(
    root: Path,
    files: Sequence[SourceFile],
    facts: Mapping[str, FileFacts],
    size: int,
    overlap: int,
    repeated: Mapping[str, tuple[str, ...]],
    clean: frozenset[str] = frozenset(),
    modules: Mapping[str, str] | None = None,
) -> list[ChunkTask]:
    """What to chunk of each file: cut at its facts' definitions, or (a path of
    ``modules``, Python the facts have not read: its module name) at those ``ast`` reads."""
    tasks = []
    modules = modules or {}
    for source in files:
        known = facts.get(source.path)
        definitions: tuple[Definition, ...] | None = None
        module = modules.get(source.path, "")
        scan = source.path not in clean  # the sweep's detectors found nothing in it
        if known is not None and known.blob == source.blob:
            module = known.module
            definitions = tuple(
                Definition(
                    s.qname, s.name, s.kind, s.start_line, s.end_line, s.signature, s.is_async, known.language
                )
                for s in known.symbols
            )
            scan = bool(known.secrets)
        tasks.append(
            ChunkTask(
                source.path,
                str(root / source.path),
                source.language,
                module,
                definitions,
                scan,
                size,
                overlap,
                repeated.get(source.path, ()),
                source.role,
                outlined=definitions is None and source.path in modules,
            )
        )
    return tasks


def document_chunks(path: str, text: str, size: int, overlap: int, kind: ChunkKind = "view") -> list[Chunk]:
    """A view's Markdown cut at its headings, with the headings as breadcrumbs, or a knowledge
    document's (``kind``) cut at every section (:func:`kbc.index.chunks.knowledge_chunks`);
    already redacted."""
    counter = default_counter()
    text = readable(text)
    cut = (
        knowledge_chunks(path, text, counter.count)
        if kind == "knowledge"
        else chunk_text(path, text, "markdown", size=size, overlap=overlap)
    )
    return [dataclasses.replace(c, kind=kind, role=kind, tokens=counter.count(c.text)) for c in cut]


def run_tasks(tasks: list[ChunkTask], workers: int, tick: Tick) -> list[Prepared]:
    if workers <= 1 or len(tasks) < POOL_MIN_FILES:
        return list(counted(map(prepare, tasks), tick))
    with ProcessPoolExecutor(max_workers=workers, mp_context=pool_context(), initializer=worker_init) as pool:
        return list(counted(pool.map(prepare, tasks, chunksize=8), tick))
