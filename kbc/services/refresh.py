"""`kbc refresh`: bring the store up to the repository's current commit, doing work in
proportion to what changed, and rebuilding from scratch only past the drift threshold.

What "proportionate" means here: files are compared by content (git blob ids), so
only changed files are parsed, chunked and embedded again; the link step and the
graphs (the symbol map) are always recomputed from the cached per-file facts; view
prose is asked for again only where a view's facts changed (the interpretation
cache is keyed by them).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from kbc.analyzers.gitrepo import (
    Changes,
    Limits,
    changes_since,
    follow,
    head_commit,
    is_url,
    uncommitted,
    without_password,
)
from kbc.domain.codec import to_data
from kbc.domain.drift import DriftReport
from kbc.domain.errors import KbcError, TargetError
from kbc.domain.settings import Settings
from kbc.index.build import index_problem
from kbc.services.build import BuildSummary, build_repository
from kbc.services.components import CONFIGURED, Components
from kbc.services.drift import find_drift
from kbc.services.embedding import fill_vectors, waits_for_vectors
from kbc.services.team import knowledge_moved
from kbc.store.facts_store import FactsStore
from kbc.store.files import write_atomic
from kbc.store.layout import index_dir, refresh_file, store_path
from kbc.store.state import BuildState, read_state, unfinished_build
from kbc.views.llm import Interpreter

RefreshMode = Literal["up-to-date", "incremental", "full"]


@dataclass(slots=True, kw_only=True)
class RefreshSummary:
    root: str
    store: str
    before: str  # the commit of the last completed build ("" if none)
    after: str  # the commit now
    mode: RefreshMode  # what the refresh did (the JSON summary's "path")
    reason: str
    changes: Changes = field(default_factory=Changes)
    build: BuildSummary | None = None
    url: str = ""
    branch: str = ""
    seconds: float = 0.0
    drift: list[DriftReport] = field(default_factory=list)  # documents behind the code

    def as_data(self) -> dict[str, Any]:
        build = self.build
        data: dict[str, Any] = {
            "root": self.root,
            "store": self.store,
            "url": without_password(self.url),
            "branch": self.branch,
            "before": self.before,
            "after": self.after,
            "path": self.mode,
            "reason": self.reason,
            "changed": {
                "added": list(self.changes.added),
                "modified": list(self.changes.modified),
                "deleted": list(self.changes.deleted),
                "renamed": [list(pair) for pair in self.changes.renamed],
            },
            "seconds": round(self.seconds, 3),
            "drift": [to_data(report) for report in self.drift],
        }
        if build is not None:
            data["build"] = {
                "parsed": build.analyze.parsed,
                "from_cache": build.analyze.cached,
                "failed": build.analyze.failed,
                "files": build.analyze.files,
                "views": build.views.views,
                "llm_calls": build.views.llm_calls,
                "views_failed": build.views.failed,
                "chunks": build.index.chunks,
                "files_rechunked": build.index.changed_files,
                "files_chunked_from_cache": build.index.chunks_from_cache,
                "files_removed": build.index.removed_files,
                "embedded": build.index.embedded,
                "vectors_removed": build.index.removed_units,
                "retrieval": build.index.retrieval,
                "note": build.index.note,
                "waited_for_lock": round(build.waited, 3),
            }
        return data


def decide(
    changes: Changes | None, tracked: int, settings: Settings, shape_changed: bool, have_state: bool
) -> tuple[RefreshMode, str]:
    """The path a refresh takes and why, from what changed and the drift threshold."""
    if not have_state:
        return "full", "no completed build in the store yet"
    if shape_changed:
        return "full", "the settings that shape the store changed"
    if changes is None:
        return "full", "the last build's commit is not in this repository's history"
    if changes.count == 0:
        return "up-to-date", "nothing changed since the last build"
    fraction = changes.count / max(tracked, 1)
    if changes.count >= settings.full_rebuild_files:
        return "full", (
            f"{changes.count} files changed, at or past KB_FULL_REBUILD_FILES={settings.full_rebuild_files}"
        )
    if fraction >= settings.full_rebuild_fraction:
        return "full", (
            f"{changes.count} of {tracked} files changed ({fraction:.0%}), at or past "
            f"KB_FULL_REBUILD_FRACTION={settings.full_rebuild_fraction:g}"
        )
    return "incremental", f"{changes.count} of {tracked} files changed ({fraction:.1%})"


def _left_behind(store_root: Path, state: BuildState | None, now: str) -> str:
    """What makes a store whose files are unchanged since its commit need a build anyway (""
    if nothing): a build stopped before it finished, facts analysed since the last build, a
    work tree that differs from its commit (``now``: its digest), or did when the last build read
    it, or an index pass that must run again."""
    if unfinished_build(store_root) is not None:
        return "the last build was stopped before it finished; its work is done again"
    current = FactsStore(store_root).current()
    if state is not None and state.generation and current != state.generation:
        return "the facts were written after the last build"
    then = state.uncommitted if state is not None else ""
    if now != then:
        return "the work tree has uncommitted changes" if now else "the last build read uncommitted changes"
    return index_problem(index_dir(store_root))


def _vectors_changed(store_root: Path, root: Path, settings: Settings, components: Components) -> str:
    """Why the index's vectors cannot serve the queries of the model that made them, now that
    its name answers another width or another probe vector ("" when they can, or when the
    model cannot say: a build would not help then). Only a model behind an API is asked: a
    local model's id pins its vectors."""
    from kbc.domain.errors import EmbedderUnavailable
    from kbc.index.exact import load_snapshot
    from kbc.index.lexical import LexicalIndex
    from kbc.index.provenance import MADE_BY, unsearchable
    from kbc.index.remote_embed import is_remote
    from kbc.store.layout import lexical_path

    try:
        lexical = LexicalIndex(lexical_path(store_root))
    except KbcError:
        return ""  # the index pass runs again anyway (index_problem)
    try:
        model, recorded, digest = lexical.meta("model"), lexical.meta(MADE_BY), lexical.meta("vectors")
    finally:
        lexical.close()
    if not is_remote(model) or not digest:
        return ""
    embedder, _, _ = components.open_embedding(store_root, root, settings, lazy=True)
    if embedder is None or embedder.model_id != model:
        return ""
    try:
        live = embedder.provenance()
    except EmbedderUnavailable:
        return ""
    snapshot = None if recorded else load_snapshot(index_dir(store_root), digest)
    return unsearchable(recorded, lambda: live, snapshot.width if snapshot is not None else 0)


def resolve_target(target: str, branch: str, settings: Settings) -> tuple[Path, str, str]:
    """A local work tree for ``target``: the path itself, or kbc's followed clone of a URL
    (kept in kbc's data folder, fetched within the settings' limits)."""
    if is_url(target):
        root, followed = follow(target, branch, settings.data_dir, limits=Limits.of(settings))
        return root, target, followed
    root = Path(target)
    if not root.is_dir():
        raise TargetError(
            f"{target} is not a directory or a repository URL",
            hint="give the path of a work tree, or a URL to clone",
        )
    return root, "", ""


def read_refresh_record(store_root: Path) -> dict[str, Any]:
    """The last refresh's record (at, ok, mode, reason or error, seconds); {} if none ran."""
    try:
        data = json.loads(refresh_file(store_root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _record(store_root: Path, record: dict[str, Any]) -> None:
    if store_root.is_dir():
        try:
            write_atomic(refresh_file(store_root), json.dumps({"at": time.time(), **record}, sort_keys=True))
        except OSError:
            pass  # the record is for operators; a refresh is not failed for want of it


def refresh(  # noqa: PLR0913 - the refresh's inputs, passed by name
    target: str,
    settings: Settings,
    store_dir: Path | None = None,
    *,
    branch: str = "",
    no_llm: bool = False,
    interpreter: Interpreter | None = None,
    force_full: bool = False,
    on_wait: Callable[[str], None] | None = None,
    with_drift: bool = True,
    components: Components = CONFIGURED,
    with_knowledge: bool = True,
) -> RefreshSummary:
    """Bring the store up to date; how it ended (done, or the error) is recorded in the store.
    ``with_knowledge``: also read the knowledge roots again (fetching those followed by URL)."""
    started = time.perf_counter()
    root, url, followed = resolve_target(target, branch, settings)
    store_root = store_path(root, settings, store_dir)
    try:
        summary = _refresh(
            root,
            url,
            followed,
            store_root,
            settings,
            store_dir,
            no_llm=no_llm,
            interpreter=interpreter,
            force_full=force_full,
            on_wait=on_wait,
            with_drift=with_drift,
            components=components,
            with_knowledge=with_knowledge,
        )
    except KbcError as error:
        _record(
            store_root,
            {
                "ok": False,
                "mode": "",
                "error": error.message,
                "seconds": round(time.perf_counter() - started, 3),
            },
        )
        raise
    summary.seconds = time.perf_counter() - started
    _record(
        store_root,
        {"ok": True, "mode": summary.mode, "reason": summary.reason, "seconds": round(summary.seconds, 3)},
    )
    return summary


def _refresh(  # noqa: PLR0913 - the refresh's inputs, passed by name
    root: Path,
    url: str,
    followed: str,
    store_root: Path,
    settings: Settings,
    store_dir: Path | None,
    *,
    no_llm: bool,
    interpreter: Interpreter | None,
    force_full: bool,
    on_wait: Callable[[str], None] | None,
    with_drift: bool,
    components: Components,
    with_knowledge: bool = True,
) -> RefreshSummary:
    state = read_state(store_root)
    after = head_commit(root)
    before = state.commit if state is not None else ""
    changes = changes_since(root, before) if before else None
    tracked = state.tracked if state is not None else 0
    shape_changed = state is not None and state.settings != settings.shape()
    mode, reason = decide(changes, tracked, settings, shape_changed, state is not None)
    dirty = uncommitted(root, store_root)
    if (
        state is not None
        and changes is not None
        and not shape_changed
        and before == after
        and dirty
        and dirty == state.uncommitted
    ):
        mode, reason = "up-to-date", "nothing changed since the last build (it read the same edits)"
    if state is not None and not before and not after and not shape_changed:
        # Not a git repository: no diff to read, so files are compared by content (the caches do).
        mode, reason = "incremental", "not a git repository: files compared by content"
    if force_full:
        mode, reason = "full", "asked for with --full"
    if mode == "up-to-date":
        problem = _left_behind(store_root, state, dirty) or _vectors_changed(
            store_root, root, settings, components
        )
        if problem:
            mode, reason = "incremental", f"no file changed, but {problem}"
    if mode == "up-to-date" and with_knowledge and knowledge_moved(root, settings, store_root):
        mode, reason = "incremental", "no file of the repository changed, but its knowledge roots did"
    if mode == "up-to-date" and before == after:
        if waits_for_vectors(store_root):  # a stopped embedding's: a refresh returns with them in
            filled = fill_vectors(root, settings, store_dir, on_wait=on_wait, components=components)
            if filled.units:
                reason = (
                    f"{reason}; the {filled.units} vectors the last build left to embed (its "
                    f"embedding had stopped) are in: {filled.embedded} embedded now"
                )
        summary = RefreshSummary(
            root=str(root.resolve()),
            store=str(store_root),
            before=before,
            after=after,
            mode=mode,
            reason=reason,
            changes=changes or Changes(),
            url=url,
            branch=followed,
            drift=find_drift(root, store_root) if with_drift else [],
        )
        return summary
    # A refresh (CI's, a server's before it answers) returns with every vector embedded.
    # Past the drift threshold the index is chunked whole again, each file's facts taken from
    # the analysis cache where its content is unchanged (a cold build parses every file);
    # `--full` parses them all again too.
    build = build_repository(
        root,
        settings,
        store_dir,
        no_llm=no_llm,
        interpreter=interpreter,
        fresh=mode == "full",
        reparse=force_full,
        on_wait=on_wait,
        components=components,
        wait=True,
    )
    summary = RefreshSummary(
        root=str(root.resolve()),
        store=str(store_root),
        before=before,
        after=after,
        mode=mode if mode != "up-to-date" else "incremental",
        reason=reason,
        changes=changes or Changes(),
        build=build,
        url=url,
        branch=followed,
        drift=find_drift(root, store_root) if with_drift else [],
    )
    return summary
