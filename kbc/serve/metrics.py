"""Prometheus metrics of a serving knowledge base: requests, tool calls, retrievals, slices'
token use, gaps, the index's size and the last refresh.

Each server has its own registry (no process-wide state), so two servers in one process, as in
tests, never share counts. What the store holds is read when scraped, and read again only once
a new build has completed.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kbc.domain.errors import KbcError

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry
    from prometheus_client.core import Metric

    from kbc.services.knowledge import KnowledgeBase
    from kbc.services.published import Followed
    from kbc.services.querylog import Logged

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
USE_BUCKETS = (0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Metrics:
    """The metrics of one server; :meth:`exposition` is what ``/metrics`` serves. With ``kb``
    (one store, labelled with its folder's name) or ``stores`` (the server's open stores, by
    repository name) they include what each store holds; the caller has :meth:`heard` told of
    every query logged."""

    def __init__(self, kb: KnowledgeBase | None = None, *, stores: Stores | None = None) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.registry: CollectorRegistry = CollectorRegistry(auto_describe=True)
        registry = self.registry
        self.requests = Counter(
            "kbc_http_requests",
            "HTTP requests answered, by endpoint and status.",
            ["endpoint", "method", "status"],
            registry=registry,
        )
        self.request_seconds = Histogram(
            "kbc_http_request_seconds",
            "Time to answer an HTTP request.",
            ["endpoint"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.tool_calls = Counter(
            "kbc_mcp_tool_calls",
            "MCP tool calls, by tool and outcome.",
            ["tool", "outcome"],
            registry=registry,
        )
        self.tool_seconds = Histogram(
            "kbc_mcp_tool_seconds",
            "Time to answer an MCP tool call.",
            ["tool"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.retrievals = Counter(
            "kbc_retrievals",
            "Slices retrieved (retrieve and ask), by use case and retrieval mode.",
            ["use_case", "retrieval"],
            registry=registry,
        )
        self.slice_tokens = Counter(
            "kbc_slice_tokens", "Tokens of the slices handed out.", ["use_case"], registry=registry
        )
        self.slice_budget = Counter(
            "kbc_slice_budget_tokens",
            "Token budgets of the slices handed out.",
            ["use_case"],
            registry=registry,
        )
        self.budget_used = Histogram(
            "kbc_slice_budget_used_ratio",
            "A slice's tokens over its budget.",
            ["use_case"],
            buckets=USE_BUCKETS,
            registry=registry,
        )
        self.gaps = Counter(
            "kbc_gaps_logged",
            "Queries logged as knowledge gaps, by kind (retrieve, ask, search; usage: reported unhelpful).",
            ["kind"],
            registry=registry,
        )
        self.queries = Counter(
            "kbc_queries_logged", "Queries written to the gap log, by kind.", ["kind"], registry=registry
        )
        self.left_out = Counter(
            "kbc_knowledge_sections_left_out",
            "Team-knowledge sections ranked among a slice's first but left out by its budget.",
            ["use_case"],
            registry=registry,
        )
        if stores is None and kb is not None:
            stores = functools.partial(_one, kb.root.name, kb)
        if stores is not None:
            registry.register(_StoreCollector(stores))

    def repositories(self, served: int, opened: Callable[[], int], queued: Callable[[], int]) -> None:
        """Gauges of a workspace: repositories served, stores open now, refreshes waiting."""
        from prometheus_client import Gauge

        Gauge("kbc_repositories", "Repositories this server answers for.", registry=self.registry).set(served)
        Gauge(
            "kbc_repositories_open", "Repositories whose stores are open now.", registry=self.registry
        ).set_function(lambda: float(opened()))
        Gauge(
            "kbc_refreshes_queued", "Refreshes waiting (queued or running).", registry=self.registry
        ).set_function(lambda: float(queued()))

    def publications(self, followed: Callable[[], dict[str, Followed]]) -> None:
        """What the server knows of each published store it follows: whether the last look at
        it succeeded, what went wrong, when it was last looked at, the publication served."""
        if followed():
            self.registry.register(_PublicationCollector(followed))

    def heard(self, logged: Logged) -> None:
        self.queries.labels(logged.kind).inc()
        if logged.gap:
            self.gaps.labels(logged.kind).inc()
        found = logged.found
        if found is not None:
            self.retrievals.labels(found.use_case, found.retrieval).inc()
            self.slice_tokens.labels(found.use_case).inc(found.tokens)
            self.slice_budget.labels(found.use_case).inc(found.budget)
            self.budget_used.labels(found.use_case).observe(found.tokens / max(1, found.budget))
            self.left_out.labels(found.use_case).inc(found.knowledge_left_out)

    def request(self, endpoint: str, method: str, status: int, seconds: float) -> None:
        self.requests.labels(endpoint, method, str(status)).inc()
        self.request_seconds.labels(endpoint).observe(seconds)

    def tool(self, tool: str, ok: bool, seconds: float) -> None:
        self.tool_calls.labels(tool, "ok" if ok else "error").inc()
        self.tool_seconds.labels(tool).observe(seconds)

    def exposition(self) -> bytes:
        from prometheus_client import generate_latest

        return generate_latest(self.registry)


class _PublicationCollector:
    def __init__(self, followed: Callable[[], dict[str, Followed]]) -> None:
        self.followed = followed

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        from prometheus_client.core import GaugeMetricFamily

        ok = GaugeMetricFamily(
            "kbc_publication_ok",
            "1 when the last look at the published store succeeded, else 0 (the last good "
            "publication is served meanwhile).",
            labels=["repository"],
        )
        problem = GaugeMetricFamily(
            "kbc_publication_problem",
            "What went wrong at the last look (1 while it lasts).",
            labels=["repository", "problem"],
        )
        checked = GaugeMetricFamily(
            "kbc_publication_checked_timestamp_seconds",
            "When the published store was last looked at (Unix time).",
            labels=["repository"],
        )
        served = GaugeMetricFamily(
            "kbc_publication_served",
            "The publication served (1).",
            labels=["repository", "publication", "commit"],
        )
        for name, followed in sorted(self.followed().items()):
            ok.add_metric([name], 1.0 if followed.ok else 0.0)
            checked.add_metric([name], followed.checked)
            if followed.problem:
                problem.add_metric([name, followed.problem[:PROBLEM_CHARS]], 1.0)
            if followed.served is not None:
                served.add_metric([name, followed.served.id, followed.served.commit], 1.0)
        yield from (ok, problem, checked, served)


PROBLEM_CHARS = 300  # of a problem in its label
Stores = Callable[[], "list[tuple[str, KnowledgeBase]]"]  # the open stores, by repository name


def _one(name: str, kb: KnowledgeBase) -> list[tuple[str, KnowledgeBase]]:
    return [(name, kb)]


@dataclass(slots=True)
class _Held:
    """What one store holds, as last read (kept until its next build completes)."""

    marker: tuple[int, int, int]
    index: dict[str, Any]
    retrieval: str
    built: float
    behind: int


class _StoreCollector:
    """What each open store holds, labelled with its repository's name: read at scrape time
    and kept until that store's next build completes."""

    def __init__(self, stores: Stores) -> None:
        self.stores = stores
        self._lock = threading.Lock()
        self._held: dict[str, tuple[KnowledgeBase, _Held]] = {}

    def describe(self) -> list[Metric]:
        return []  # described by collecting: the values are cheap once cached

    def _read(self, name: str, kb: KnowledgeBase) -> _Held:
        marker = kb.served.marker()
        known = self._held.get(name)
        if known is not None and known[0] is kb and known[1].marker == marker:
            return known[1]
        index: dict[str, Any] = {}
        retrieval, built, behind = "none", 0.0, 0
        try:
            status = kb.status()
        except KbcError:
            pass
        else:
            from kbc.store.state import finished_at, read_state

            index, retrieval = dict(status.index), status.retrieval
            state = read_state(kb.store) if status.built else None
            built = finished_at(kb.store, state) if state is not None else 0.0
        try:
            behind = len(kb.reads.drift())
        except (KbcError, OSError):
            behind = 0
        held = _Held(marker, index, retrieval, built, behind)
        self._held[name] = (kb, held)
        return held

    def collect(self) -> Iterator[Metric]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        from kbc.services.refresh import read_refresh_record

        stores = sorted(self.stores(), key=lambda pair: pair[0])
        with self._lock:
            held = [(name, kb, self._read(name, kb)) for name, kb in stores]
            for gone in set(self._held) - {name for name, _kb in stores}:
                del self._held[gone]
        repository = ["repository"]
        behind = GaugeMetricFamily(
            "kbc_documents_behind",
            "Documents (the repository's and team knowledge's) behind the code, as `kbc drift` lists them.",
            labels=repository,
        )
        hits = CounterMetricFamily(
            "kbc_slice_cache_hits",
            "Slices answered from the cache of the newest "
            "build (the same request on the same build gives the same bytes).",
            labels=repository,
        )
        proposals = GaugeMetricFamily(
            "kbc_proposals", "Proposals to the knowledge roots, by status.", labels=[*repository, "status"]
        )
        sizes = GaugeMetricFamily(
            "kbc_index_size",
            "What the index holds: files, chunks, embedding units and units embedded.",
            labels=[*repository, "part"],
        )
        mode = GaugeMetricFamily(
            "kbc_retrieval_mode",
            "1 for the retrieval mode the index allows now.",
            labels=[*repository, "retrieval"],
        )
        last_build = GaugeMetricFamily(
            "kbc_last_build_timestamp_seconds",
            "When the last completed build finished (Unix time).",
            labels=repository,
        )
        last_refresh = GaugeMetricFamily(
            "kbc_last_refresh_timestamp_seconds",
            "When the last refresh ended (Unix time).",
            labels=repository,
        )
        since = GaugeMetricFamily(
            "kbc_seconds_since_last_refresh", "Seconds since the last refresh ended.", labels=repository
        )
        outcome = GaugeMetricFamily(
            "kbc_last_refresh_success",
            "1 if the last refresh succeeded, 0 if it failed; labelled with what it did.",
            labels=[*repository, "mode"],
        )
        now = time.time()
        for name, kb, store in held:
            behind.add_metric([name], store.behind)
            hits.add_metric([name], kb.served.cache_hits)
            by_status: dict[str, int] = {"open": 0, "merged": 0, "closed": 0}
            try:
                for proposal in kb.proposals.all(reviewed=False):  # a scrape never waits on the forge
                    by_status[proposal.status] = by_status.get(proposal.status, 0) + 1
            except (KbcError, OSError):
                pass
            for status, count in sorted(by_status.items()):
                proposals.add_metric([name, status], count)
            for part in ("files", "chunks", "units", "embedded"):
                value = store.index.get(part)
                if isinstance(value, int):
                    sizes.add_metric([name, part], value)
            for retrieval in ("hybrid", "lexical", "none"):
                mode.add_metric([name, retrieval], 1.0 if retrieval == store.retrieval else 0.0)
            if store.built:
                last_build.add_metric([name], store.built)
            record = read_refresh_record(kb.store)
            at = record.get("at")
            if isinstance(at, (int, float)):
                last_refresh.add_metric([name], float(at))
                since.add_metric([name], max(0.0, now - float(at)))
                outcome.add_metric(
                    [name, str(record.get("mode") or "failed")], 1.0 if record.get("ok") else 0.0
                )
        yield from (behind, hits, proposals, sizes, mode, last_build, last_refresh, since, outcome)
