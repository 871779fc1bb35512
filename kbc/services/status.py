"""`kbc status`: what a store holds and what retrieval will use, read without building.

Every part is read on its own: a store whose build stopped halfway (say, killed while
embedding) reports what it has, and the mode retrieval falls back to, with the reason. The
index's vectors are compared with what the configured model makes (a model behind an API is
asked to embed a probe text, :mod:`kbc.index.provenance`), and vectors set aside by a build
are named with the reason.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kbc.domain.errors import KbcError
from kbc.domain.models import KNOWLEDGE_PREFIX
from kbc.domain.settings import Settings
from kbc.domain.views import VIEW_PREFIX
from kbc.store.layout import LEXICAL

if TYPE_CHECKING:
    from kbc.services.components import Components


@dataclass(frozen=True, slots=True, kw_only=True)
class Status:
    repo: str
    store: str
    built: bool  # a build finished (state.json written)
    last_build: dict[str, str | int] = field(default_factory=dict)  # commit, tracked, kbc, finished
    facts: dict[str, int] = field(default_factory=dict)  # files, python_files, symbols, failed
    views: dict[str, int] = field(default_factory=dict)  # kind -> count
    # files, chunks, units, embedded, model; width (and a remote model's fingerprint) of the vectors
    index: dict[str, int | str] = field(default_factory=dict)
    retrieval: str = "none"  # what retrieve will use now: hybrid, lexical, or none (no index)
    note: str = ""  # why retrieval is not hybrid, or what is incomplete
    roles: dict[str, int] = field(default_factory=dict)  # tracked files by role (kbc.analyzers.roles)


def repository_status(
    root: Path, settings: Settings, store_dir: Path | None = None, components: Components | None = None
) -> Status:
    from kbc.services.components import CONFIGURED
    from kbc.store.layout import store_path

    store_root = store_path(root, settings, store_dir)
    if not store_root.is_dir():
        raise KbcError(
            f"no store for {root.resolve()} at {store_root}", hint="run `kbc build` on the repository first"
        )
    from kbc.store.state import unfinished_build

    notes: list[str] = []
    last = _last_build(store_root)
    if unfinished_build(store_root) is not None:
        notes.append(
            "a build is under way, or was stopped before it finished (what it left is not "
            "read; `kbc refresh` clears it and builds again)"
        )
    from kbc.services.embedding import waits_for_facts

    later = waits_for_facts(store_root)
    facts, roles = _facts(store_root, [] if later else notes)  # a first index has no facts yet
    views = _views(store_root)
    index, retrieval = _index(store_root, root, notes, settings, components or CONFIGURED)
    return Status(
        repo=str(root.resolve()),
        store=str(store_root),
        built=bool(last),
        last_build=last,
        facts=facts,
        views=views,
        index=index,
        retrieval=retrieval,
        note="; ".join(notes),
        roles=roles,
    )


def _last_build(store_root: Path) -> dict[str, str | int]:
    from kbc.store.state import finished_at, read_state

    state = read_state(store_root)
    if state is None:
        return {}
    finished = finished_at(store_root, state)
    return {
        "commit": state.commit,
        "tracked": state.tracked,
        "kbc": state.kbc,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(finished)),
    }


def _facts(store_root: Path, notes: list[str]) -> tuple[dict[str, int], dict[str, int]]:
    from kbc.analyzers.roles import ROLES
    from kbc.store.facts_store import FactsStore

    store = FactsStore(store_root)
    try:
        files = store.inventory().files
        every = list(store.facts())
        failed = len(store.failures())
    except KbcError as exc:
        notes.append(f"facts: {exc.message}")
        return {}, {}
    counts = Counter(f.role for f in files)
    roles = {role: counts[role] for role in ROLES if counts[role]}
    return {
        "files": len(files),
        "python_files": sum(1 for f in files if f.language == "python"),
        "symbols": sum(len(f.symbols) for f in every),
        "failed": failed,
    }, roles


def _views(store_root: Path) -> dict[str, int]:
    from kbc.store.views_store import ViewsStore

    store = ViewsStore(store_root)
    if not store.exists():
        return {}
    try:
        return dict(sorted(Counter(str(v.kind) for v in store.read()).items()))
    except KbcError:
        return {}


def _index(
    store_root: Path, root: Path, notes: list[str], settings: Settings, components: Components
) -> tuple[dict[str, int | str], str]:
    from kbc.domain.errors import IndexDamaged
    from kbc.index.exact import load_snapshot
    from kbc.index.lexical import PENDING, LexicalIndex
    from kbc.index.progress import LATER, progress_of
    from kbc.index.provenance import MADE_BY, Provenance, unsearchable
    from kbc.index.units import units_of
    from kbc.store.layout import index_dir
    from kbc.store.lock import filling

    where = index_dir(store_root)
    # Asked before the index is read: a process that publishes the vectors and lets go while
    # this reads would otherwise read as stopped.
    running = filling(store_root)
    if not (where / LEXICAL).is_file():
        notes.append("no index: run `kbc build`")
        return {}, "none"
    try:
        lexical = LexicalIndex(where / LEXICAL)
    except IndexDamaged as exc:
        notes.append(exc.message)
        return {}, "none"
    try:
        if lexical.stale:
            notes.append("the index was written by another kbc version: run `kbc build`")
            return {}, "none"
        chunks = lexical.all_chunks()
        indexed_model = lexical.meta("model")
        recorded = lexical.meta(MADE_BY)
        digest = lexical.meta("vectors")
        waiting, state = lexical.meta(PENDING), lexical.meta("state")
        later = lexical.meta(LATER)
        indexed = list(lexical.files())
    finally:
        lexical.close()
    embedder, _, why = components.open_embedding(store_root, root, settings, lazy=True)
    model = embedder.model_id if embedder is not None else indexed_model
    units = {u.id for u in units_of(chunks, model, tests=settings.embed_tests)} if model else set()
    snapshot = load_snapshot(where, digest) if digest else None
    embedded = len(units.intersection(snapshot.units)) if snapshot is not None else 0
    views = sum(1 for path in indexed if path.startswith(VIEW_PREFIX))
    knowledge = sum(1 for path in indexed if path.startswith(KNOWLEDGE_PREFIX))
    summary: dict[str, int | str] = {
        "files": len(indexed) - views - knowledge,  # the repository's, as the facts count them
        "views": views,
        "knowledge": knowledge,  # team-knowledge documents
        "chunks": len(chunks),
        "units": len(units),
        "embedded": embedded,
        "model": model,
    }
    made = Provenance.from_json(recorded)  # what made the index's vectors (None: no record)
    width = made.width if made is not None else snapshot.width if snapshot is not None else 0
    if width:
        summary["width"] = width
    if made is not None and made.fingerprint:
        summary["fingerprint"] = made.fingerprint
    if made is not None and made.replaced:
        notes.append(made.replaced)
    if later:
        summary["later"] = "running" if running else "stopped"
        notes.append(
            "the first index: the facts (calls, imports), the views and team knowledge"
            + (", then the vectors," if embedder is not None else "")
            + (
                " are being read in the background (`kbc embed` waits for them)"
                if running
                else " were left unread: the process reading them stopped (`kbc refresh` reads them)"
            )
        )
        return summary, "lexical"
    if embedder is None:
        notes.append(why)
        return summary, "lexical"
    if waiting and waiting == embedder.model_id:
        found = progress_of(where, state, waiting)
        summary["embedded"] = found.embedded if found is not None else 0
        summary["filling"] = "running" if running else "stopped"
        if summary["filling"] == "running":
            notes.append(
                f"vectors being embedded in the background ({summary['embedded']} of {len(units)} "
                "units): retrieval turns hybrid when all are in (`kbc embed` waits for it)"
            )
        else:
            notes.append(
                f"the embedding after the build stopped at {summary['embedded']} of {len(units)} "
                "units: `kbc embed` goes on from there"
            )
        return summary, "lexical"
    if indexed_model != embedder.model_id or snapshot is None:
        notes.append(f"the index holds no vectors for {embedder.model_id}: run `kbc build` to embed")
        return summary, "lexical"
    problem = unsearchable(recorded, embedder.provenance, snapshot.width)
    if problem:
        notes.append(problem)
        return summary, "lexical"
    if embedded < len(units):
        notes.append(f"{len(units) - embedded} units are not embedded yet: `kbc build` embeds them")
    return summary, "hybrid"
