"""One repository's knowledge base, opened once: what the Python API, the CLI, the MCP server
and `kbc eval` call. Its parts (embedder, vector store, LLM interpreter, token counter) come
from :class:`~kbc.services.components.Components`; every path argument is confined to the
repository's tracked files.

It builds, retrieves, answers, searches and tells its status itself; the rest is one
attribute per family:
``served`` (the build it serves: :class:`~kbc.services.following.ServedBuild`), ``reads``
(views, symbols, drift, scopes, files: :class:`~kbc.services.reading.Reading`), ``proposals``
(:class:`~kbc.services.proposing.Proposing`), ``queries`` (the gap log:
:class:`~kbc.services.querylog.QueryLog`) and ``use_cases``
(:class:`~kbc.services.use_cases.UseCases`)."""

from __future__ import annotations

import dataclasses
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kbc.domain.errors import KbcError
from kbc.domain.progress import Reporter, Say
from kbc.domain.settings import Settings, load_settings
from kbc.retrieval.answer import Answer, extractive, llm_answer
from kbc.retrieval.results import Evidence, Slice, without
from kbc.retrieval.retrieve import Retriever
from kbc.services.components import CONFIGURED, Components
from kbc.services.following import FollowedBuild, ServedBuild
from kbc.services.proposing import Proposing
from kbc.services.querylog import QueryLog
from kbc.services.reading import Reading
from kbc.services.reads import SearchHit, hits_of, within
from kbc.services.retrieve import serving_retriever
from kbc.services.status import Status, repository_status
from kbc.services.team import outside
from kbc.services.use_cases import UseCases

if TYPE_CHECKING:
    from kbc.services.analyze import AnalyzeSummary
    from kbc.services.build import BuildSummary
    from kbc.services.evaluate import EvalReport
    from kbc.services.refresh import RefreshSummary
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
        self.served = ServedBuild(self._build, self._lock, self.root, self._open_retriever)
        self.reads = Reading(self.root, self.store, self.settings, self.components, self.served)
        self.proposals = Proposing(
            self.served.manifest, self.settings, self.root, self.store, self.components
        )
        # every retrieve, ask, search and report_usage; listen() to hear each as it is logged
        self.queries = QueryLog(gap_log(self.store), self.settings.gap_retention_days)
        self.use_cases = UseCases(self.root)

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
        self.queries.close()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading -------------------------------------------------------------

    def _open_retriever(self) -> Retriever:
        return serving_retriever(self.root, self.settings, self.store, self.components)

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
        """The slice and the id under which the query was logged (for ``queries.report_usage``).
        ``scopes``: the knowledge scopes it may hold (default: ``scopes.default``, else every
        scope but the projects/... ones); a confidence below ``min_confidence`` (None: the
        confidence floor) packs nothing but pointers to the nearest matches."""
        found, evidence = self.slice_for(task, use_case, budget, scopes=scopes, min_confidence=min_confidence)
        return found, self.queries.record(kind, task, use_case, evidence, found=found)

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
        profile = self.use_cases.named(use_case)
        with self._lock:
            if self.settings.auto_refresh:
                self._refresh_if_moved()
            retriever = self.served.retriever()  # one build for the whole request
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
        profile = self.use_cases.named(use_case)
        with self._lock:
            ranking = without(self.served.retriever().search(query, profile), self._excluded(scopes))
        hits = within(
            hits_of(ranking.ranked, ranking.chunks, k), budget, self.components.token_counter().count
        )
        self.queries.record("search", query, use_case, ranking.evidence)
        return hits

    def _excluded(self, scopes: Sequence[str] | None) -> frozenset[str]:
        return outside(self.served.manifest(), scopes, self.settings.default_scopes)

    def status(self) -> Status:
        """What the store holds and what retrieval will use; builds nothing. Once the open
        retriever has fallen back to lexical (its model failed), the status says so."""
        found = repository_status(self.root, self.settings, self.store, self.components)
        why = self.served.fallback
        if why and found.retrieval == "hybrid":
            found = dataclasses.replace(
                found, retrieval="lexical", note="; ".join(n for n in (found.note, why) if n)
            )
        return found

    def evaluate(self, golden: Path, use_cases: Sequence[str] = ()) -> EvalReport:
        """Every question of the golden file ``golden`` asked of this store."""
        from kbc.services.evaluate import evaluate_golden

        return evaluate_golden(self.root, self.settings, golden, self.store, use_cases, self.components)
