"""One repository's knowledge base, opened once: what the Python API, the CLI, the MCP server
and `kbc eval` call. Its parts (embedder, vector store, LLM interpreter, token counter) come
from :class:`~kbc.services.components.Components`; every path argument is confined to the
repository's tracked files."""

from __future__ import annotations

import dataclasses
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kbc.analyzers.secret_places import secret_by_nature
from kbc.domain.drift import DriftReport
from kbc.domain.errors import KbcError, NotFound
from kbc.domain.progress import Reporter, Say
from kbc.domain.settings import Settings, load_settings
from kbc.domain.views import View
from kbc.retrieval.answer import Answer, extractive, llm_answer
from kbc.retrieval.profiles import Profile, load_profiles
from kbc.retrieval.results import Evidence, Slice, without
from kbc.retrieval.retrieve import Retriever
from kbc.services.components import CONFIGURED, Components
from kbc.services.drift import find_drift
from kbc.services.following import FollowedBuild
from kbc.services.proposing import Proposing
from kbc.services.querylog import Listener, QueryLog
from kbc.services.reads import FileLines, ScopeSummary, SearchHit, hits_of, within
from kbc.services.retrieve import serving_retriever
from kbc.services.serving import read_lines, within_budget
from kbc.services.status import Status, repository_status
from kbc.services.symbols import SymbolReport, find_symbols
from kbc.services.team import Manifest, outside, read_manifest, scope_summaries
from kbc.services.views import read_views

if TYPE_CHECKING:
    from kbc.services.analyze import AnalyzeSummary
    from kbc.services.build import BuildSummary
    from kbc.services.evaluate import EvalReport
    from kbc.services.proposals import Proposal
    from kbc.services.refresh import RefreshSummary
from kbc.store.facts_store import FactsStore
from kbc.store.gaps import Gap
from kbc.store.layout import gap_log, store_path
from kbc.views.llm import Interpreter


class UntrustedSetting(UserWarning):
    """A repository's own configuration set a field only the user may set; it was ignored."""


class KnowledgeBase:
    """The knowledge base of the repository at ``path`` (built with :meth:`build`)."""

    def __init__(
        self,
        path: str | Path = ".",
        *,
        store: str | Path | None = None,
        settings: Settings | None = None,
        notify: Say | None = None,
        components: Components = CONFIGURED,
    ) -> None:
        """``settings`` default to the repository's resolved configuration; ``components``
        to the parts those settings name. ``notify`` hears what happens on the way to an
        answer (an automatic refresh, a wait for another writer of the store); by default
        nothing is said."""
        self.root = Path(path).resolve()
        self.components = components
        self._notify = notify or (lambda _message: None)
        if settings is None:
            settings = load_settings(self.root)
            for notice in settings.notices:
                warnings.warn(notice, UntrustedSetting, stacklevel=2)
        self.settings = settings
        self.store = store_path(self.root, self.settings, Path(store) if store is not None else None)
        self._lock = threading.RLock()
        self._build = FollowedBuild(self.store, self.settings.cache_mb)  # what was read of the newest build
        self._queries = QueryLog(gap_log(self.store), self.settings.gap_retention_days)
        self._profiles: tuple[tuple[tuple[str, int, int], ...], dict[str, Profile]] | None = None
        self._proposing = Proposing(self.manifest, self.settings)

    def listen(self, listener: Listener) -> None:
        """Call ``listener`` after every query logged (retrieve, ask, search, report_usage)."""
        self._queries.listen(listener)

    # -- writing -------------------------------------------------------------

    def analyze(self, *, progress: Reporter | None = None) -> AnalyzeSummary:
        """The facts pass alone (what `kbc analyze` runs); ``progress`` hears each of its passes."""
        from kbc.services.analyze import analyze_repository

        with self._lock:
            self._reset()
            return analyze_repository(self.root, self.settings, self.store, progress=progress)

    def build(
        self,
        *,
        no_llm: bool = False,
        interpreter: Interpreter | None = None,
        progress: Reporter | None = None,
        wait: bool | None = None,
    ) -> BuildSummary:
        """Every pass; ``interpreter`` overrides the components' one for this build;
        ``progress`` hears each pass and each stage's summary as it ends; ``wait``: see
        :func:`kbc.services.build.build_repository`."""
        from kbc.services.build import build_repository

        with self._lock:
            self._reset()
            return build_repository(
                self.root,
                self.settings,
                self.store,
                progress=progress,
                no_llm=no_llm,
                interpreter=interpreter,
                on_wait=self._notify,
                components=self.components,
                wait=wait,
            )

    def refresh(self, *, no_llm: bool = False, full: bool = False) -> RefreshSummary:
        with self._lock:
            self._reset()
            return self._refreshed(no_llm=no_llm, force_full=full)

    def _refresh_if_moved(self) -> None:
        """KB_AUTO_REFRESH: bring the store up to the repository's HEAD before answering."""
        # Before each answer: the repository's own commits only (the knowledge roots, fetched
        # by URL, are read again by `kbc refresh`, not on every request).
        done = self._refreshed(with_drift=False, with_knowledge=False)
        if done.mode != "up-to-date":
            self._notify(f"kbc: refreshed the store first ({done.mode}: {done.reason})")
            self._reset()

    def _refreshed(
        self,
        *,
        no_llm: bool = False,
        force_full: bool = False,
        with_drift: bool = True,
        with_knowledge: bool = True,
    ) -> RefreshSummary:
        from kbc.services.refresh import refresh

        return refresh(
            str(self.root),
            self.settings,
            self.store,
            no_llm=no_llm,
            force_full=force_full,
            on_wait=self._notify,
            with_drift=with_drift,
            components=self.components,
            with_knowledge=with_knowledge,
        )

    def _reset(self) -> None:
        self._build.forget()

    def close(self) -> None:
        with self._lock:
            self._build.close()
        self._queries.close()

    @property
    def cache_hits(self) -> int:
        """Slices answered from the cache of the newest build."""
        return self._build.cache_hits

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading -------------------------------------------------------------

    def retriever(self) -> Retriever:
        """The retriever over the newest completed build: a build finished since it was
        opened (by this process or another) replaces it before the next request."""
        with self._lock:
            self.follow()
            if self._build.retriever is None:
                self._build.retriever = serving_retriever(
                    self.root, self.settings, self.store, self.components
                )
            return self._build.retriever

    def build_marker(self) -> tuple[int, int, int]:
        """Changes exactly when a build completes: what caches of a build's answers key on."""
        return self._build.build_record()

    def follow(self) -> None:
        """Forget what was read from an older build if a newer one completed since (the next
        read opens the newer one whole)."""
        with self._lock:
            self._build.follow()

    def use_cases(self) -> dict[str, Profile]:
        """The profiles, read again only when the repository's configuration files change."""
        from kbc.domain.settings import config_files

        marks = []
        for path in config_files(self.root):
            try:
                found = path.stat()
            except OSError:
                continue
            marks.append((str(path), found.st_mtime_ns, found.st_size))
        key = tuple(marks)
        cached = self._profiles
        if cached is not None and cached[0] == key:
            return dict(cached[1])
        profiles = load_profiles(self.root)
        self._profiles = (key, profiles)
        return dict(profiles)

    def profile(self, name: str) -> Profile:
        profiles = self.use_cases()
        if name not in profiles:
            raise KbcError(f"no use case named {name!r}", hint=f"use one of: {', '.join(sorted(profiles))}")
        return profiles[name]

    def retrieve(
        self,
        task: str,
        use_case: str = "implementation",
        budget: int | None = None,
        scopes: Sequence[str] | None = None,
    ) -> Slice:
        return self.retrieve_logged(task, use_case, budget, scopes=scopes)[0]

    def retrieve_logged(
        self,
        task: str,
        use_case: str = "implementation",
        budget: int | None = None,
        kind: str = "retrieve",
        scopes: Sequence[str] | None = None,
        min_confidence: float | None = None,
    ) -> tuple[Slice, str]:
        """The slice and the id under which the query was logged (for :meth:`report_usage`).
        ``scopes``: the knowledge scopes it may hold (default: ``scopes.default``, else every
        scope but the projects/... ones); a confidence below ``min_confidence`` (None: the
        confidence floor) packs nothing but pointers to the nearest matches."""
        found, evidence = self.slice_for(task, use_case, budget, scopes=scopes, min_confidence=min_confidence)
        return found, self.log_query(kind, task, use_case, evidence, found=found)

    def slice_for(
        self,
        task: str,
        use_case: str = "implementation",
        budget: int | None = None,
        *,
        scopes: Sequence[str] | None = None,
        min_confidence: float | None = None,
    ) -> tuple[Slice, Evidence]:
        """The slice and the evidence it was ranked on, without logging the query (what a
        retrieval across repositories packs from, then logs once it knows the answer)."""
        profile = self.profile(use_case)
        with self._lock:
            if self.settings.auto_refresh:
                self._refresh_if_moved()
            retriever = self.retriever()  # one build for the whole request
            exclude = self._excluded(scopes)
            key = (task, profile, budget, exclude, min_confidence)
            cached = self._build.slice(key)
            if cached is not None:
                return cached
            if budget is not None and budget < 1:
                raise KbcError(f"budget {budget} is too small", hint="give a budget of 1 token or more")
            ranked_key = (task, profile, exclude)
            ranking = self._build.ranking(ranked_key)
            if ranking is None:  # one search serves every budget it is packed into
                ranking = without(retriever.search(task, profile), exclude)
                if ranking.reranked or not ranking.rerank:  # a reranker that failed is asked again
                    self._build.keep_ranking(ranked_key, ranking)
            found = retriever.slice_of(
                ranking, task, profile, profile.budget if budget is None else budget, exclude, min_confidence
            )
            evidence = ranking.evidence
            if ranking.reranked or not ranking.rerank:
                self._build.keep_slice(key, (found, evidence))
            return found, evidence

    def log_query(
        self,
        kind: str,
        task: str,
        use_case: str,
        evidence: Evidence,
        *,
        gap: bool | None = None,
        found: Slice | None = None,
    ) -> str:
        """Write a query to the gap log (``gap``: whether it is one; by default, whether its
        evidence is below the floor) and tell the listeners; returns its id."""
        return self._queries.record(kind, task, use_case, evidence, gap=gap, found=found)

    def ask(
        self,
        question: str,
        *,
        no_llm: bool = False,
        budget: int | None = None,
        interpreter: Interpreter | None = None,
        scopes: Sequence[str] | None = None,
    ) -> tuple[Answer, str]:
        """An answer whose citations all point inside the retrieved sources, and its query id."""
        found, query_id = self.retrieve_logged(question, "qa", budget, kind="ask", scopes=scopes)
        chosen = None if no_llm else (interpreter or self.components.llm(self.settings))
        if chosen is None:
            why = "--no-llm" if no_llm else "no LLM configured (set KBC_LLM_MODEL)"
            return extractive(question, found, why), query_id
        return llm_answer(question, found, chosen), query_id

    def search(
        self,
        query: str,
        k: int = 10,
        use_case: str = "implementation",
        scopes: Sequence[str] | None = None,
        budget: int | None = None,
    ) -> list[SearchHit]:
        """The top ``k`` hits, best first; with ``budget``, only as many as their texts fit in
        that many tokens."""
        profile = self.profile(use_case)
        with self._lock:
            ranking = without(self.retriever().search(query, profile), self._excluded(scopes))
        hits = within(
            hits_of(ranking.ranked, ranking.chunks, k), budget, self.components.token_counter().count
        )
        self._queries.record("search", query, use_case, ranking.evidence)
        return hits

    # -- team knowledge ------------------------------------------------------

    def manifest(self) -> Manifest:
        """What the last build read of the knowledge roots (empty without any)."""
        with self._lock:
            self.follow()
            if self._build.manifest is None:
                self._build.manifest = read_manifest(self.store)
            return self._build.manifest

    def scopes(self) -> list[ScopeSummary]:
        """Every knowledge scope: its name, documents, roots, and whether a request that names
        no scope reads it."""
        return scope_summaries(self.manifest(), self.settings.default_scopes)

    def propose(
        self, path: str, *, content: str | None = None, diff: str | None = None, rationale: str, author: str
    ) -> Proposal:
        """Propose a change to a knowledge document as a new branch of its root (never a write)."""
        return self._proposing.propose(path, content=content, diff=diff, rationale=rationale, author=author)

    def propose_drift(
        self, *, no_llm: bool = False, interpreter: Interpreter | None = None
    ) -> list[Proposal]:
        """A proposal for every document behind the code (``kbc drift --propose``): a skeleton, or
        with an LLM configured its grounded rewrite, marked as machine-written."""
        from kbc.services.drift_proposals import grounding, propose_drift

        chosen = None if no_llm else (interpreter or self.components.llm(self.settings))
        code = grounding(self.root, self.store) if chosen is not None else None
        return propose_drift(self.manifest(), self.root, self.drift(), chosen, code, self._proposing.forge())

    def proposals(self, *, reviewed: bool = True) -> list[Proposal]:
        """Every proposal, newest first; ``reviewed``: the open ones with their requests as the
        configured forge has them (else as the knowledge roots' branches alone say)."""
        return self._proposing.proposals(reviewed=reviewed)

    def proposal(self, proposal_id: str) -> tuple[Proposal, str]:
        """One proposal and the diff it proposes."""
        return self._proposing.proposal(proposal_id)

    def close_proposal(self, proposal_id: str) -> Proposal:
        return self._proposing.close(proposal_id)

    def _excluded(self, scopes: Sequence[str] | None) -> frozenset[str]:
        return outside(self.manifest(), scopes, self.settings.default_scopes)

    def views(self, kind: str | None = None) -> list[View]:
        return [v for v in read_views(self.store) if kind is None or v.kind == kind]

    def view(self, view_id: str) -> View:
        for found in read_views(self.store):
            if found.id == view_id:
                return found
        raise NotFound(f"no view {view_id!r}", hint="list_views / `kbc views` lists them")

    def symbol(self, name: str) -> list[SymbolReport]:
        return find_symbols(FactsStore(self.store), name)

    def render(self, out: Path) -> list[Path]:
        """Every view as Markdown in ``out``, with an index page; the pages written."""
        from kbc.services.views import render_folder

        return render_folder(self.store, self.root, out)

    def drift(self) -> list[DriftReport]:
        """The documents that are behind the code."""
        return find_drift(self.root, self.store)

    def status(self) -> Status:
        """What the store holds and what retrieval will use; builds nothing. Once the open
        retriever has fallen back to lexical (its model failed), the status says so."""
        found = repository_status(self.root, self.settings, self.store, self.components)
        why = self.fallback
        if why and found.retrieval == "hybrid":
            found = dataclasses.replace(
                found, retrieval="lexical", note="; ".join(n for n in (found.note, why) if n)
            )
        return found

    @property
    def fallback(self) -> str:
        """Why the open retriever reads lexically although its index has every vector (its
        model failed after it opened); "" when it does not."""
        with self._lock:
            live = self._build.retriever
        if live is None or live.mode != "lexical" or live.waiting:
            return ""
        return live.current_note() or "the embedding model failed: retrieval is lexical"

    def evaluate(self, golden: Path, use_cases: Sequence[str] = ()) -> EvalReport:
        """Every question of the golden file ``golden`` asked of this store."""
        from kbc.services.evaluate import evaluate_golden

        return evaluate_golden(self.root, self.settings, golden, self.store, use_cases, self.components)

    def file(
        self, path: str, start: int | None = None, end: int | None = None, budget: int | None = None
    ) -> FileLines:
        """Lines of a tracked file or a knowledge document, redacted; anything else (traversal,
        absolute, untracked or ignored paths, files that are secrets by nature) is refused. With
        ``budget``, the lines from ``start`` that fit in that many tokens (``truncated`` says
        whether some were left out)."""
        found = read_lines(
            self.root,
            self.manifest(),
            self._tracked_files,
            self._repository_values,
            path,
            start,
            end,
            self.settings.max_file_bytes,
        )
        if budget is None:
            return found
        return within_budget(found, budget, self.components.token_counter().count)

    def tracked_paths(self) -> frozenset[str]:
        """The tracked text files that may be served (all but those that are secrets by nature)
        and the knowledge documents."""
        files = frozenset(path for path in self._tracked_files() if secret_by_nature(path) is None)
        return files | frozenset(self.manifest().documents)

    def _repository_values(self) -> set[str]:
        """The credential values of the files where the build found some, read again now."""
        with self._lock:
            self.follow()
            return self._build.credential_values(self.root)

    def _tracked_files(self) -> dict[str, tuple[int, str]]:
        with self._lock:
            self.follow()
            return self._build.tracked_files(self.root)

    # -- the gap log ---------------------------------------------------------

    def report_usage(self, query_id: str, helpful_ids: list[str]) -> bool:
        return self._queries.report_usage(query_id, helpful_ids)

    def gaps(self) -> list[Gap]:
        return self._queries.gaps()
