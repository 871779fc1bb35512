"""What the ranking model reads: each candidate file's and each unit's signals, as numbers.

The searches and the query's reading give ranked lists (lexical hits, vector hits,
what the task names, the graph's neighbours, the code the best views cite) and a
few scores; the repository gives each file's size, centrality and last change, and its
history the files changed for requests like the task (:mod:`kbc.retrieval.precedent`).
:func:`file_features` turns them into one row per candidate file, and
:func:`unit_features` into one row per unit of a file. The same functions serve
the fitted model at query time and the procedure that fits it
(``benchmarks/fit_ranker.py``), so the two never read the signals differently.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from kbc.domain.models import Chunk, GraphFacts
from kbc.index.tokens import path_tokens, tokens
from kbc.retrieval.matched import Located
from kbc.retrieval.query import CODE, COMMAND, FRAME, LINE, MESSAGE, NAME, OPTION, PATH, SNIPPET

DEPTH = 200  # a rank past this reads as absent

FILE_FEATURES = (
    "lexical_best",
    "lexical_file",
    "lexical_score",
    "lexical_units",
    "vector_best",
    "vector_gap",
    "named_strong",
    "named_definition",
    "named_text",
    "named_count",
    "near",
    "cited",
    "lift",
    "path_terms",
    "stem_named",
    "units",
    "centrality",
    "fan_in",
    "age",
    "package_init",
    "named_rank",
    "symbol_terms",
    "precedent",
)
# No BM25 magnitude: it grows with the corpus (a term's IDF), so it reads a small repository's
# clear match as a weak one; the shares of the query's terms the repository holds do not.
QUERY_FEATURES = ("coverage", "idf_coverage", "similarity", "named", "terms")
# The confidence model reads the query's features and how sure the file model is of its first file.
# The merged ranking's first item adds its calibrated score and the share of the query it holds,
# and a task that names a definition exactly says so.
CONFIDENCE_FEATURES = (
    *QUERY_FEATURES,
    "top_file",
    "margin",
    "top_item",
    "top_coverage",
    "exact_name",
    "frame_or_path",
    "named_share",
)
# What the merge across corpora reads of each candidate (kbc.retrieval.corpora): evidence that
# means the same in code, tests, docs, views and team knowledge.
MERGE_FEATURES = (
    "coverage",
    "coverage_lead",
    "rank",
    "similarity",
    "similarity_lead",
    "named",
    "terms",
    # what a candidate is: a team note is likely for a short question, not for a long report
    "note",
    "note_terms",
)
UNIT_FEATURES = (
    "lexical_rank",
    "lexical_share",
    "vector_rank",
    "vector_gap",
    "named",
    "near",
    "prelude",
    "outline",
    "definition",
    "window",
    "distance",
    "tokens",
    "first",
    "name_terms",
    "definition_share",
)


def rank_score(rank: int | None, depth: int = DEPTH) -> float:
    """1 for the first of a ranked list, falling with the log of the rank to 0 past ``depth``;
    0 for an item not in the list."""
    if rank is None or rank > depth:
        return 0.0
    return 1.0 - math.log(rank) / math.log(depth + 1)


@dataclass(slots=True, kw_only=True)
class Signals:
    """Everything the searches found for one query, before any weighing."""

    query: str
    lexical: list[tuple[str, float]]  # the best lexical hits: (chunk id, BM25), best first
    pool: dict[str, float]  # BM25 of a deeper pool of lexical hits
    vector: list[str]  # chunk ids by vector similarity, best first ([] when lexical only)
    similarity: dict[str, float]  # chunk id -> best unit similarity, for the vector hits
    matched: list[str]  # the chunks of what the query names, strongest mention first
    matched_kinds: dict[str, int]  # chunk id -> the strongest kind of mention it holds
    near: list[str]  # the seeds' neighbours in the call graph, strongest first
    cited: list[str]  # the code the best views cite, in order
    lift: dict[str, float]  # path -> personalised PageRank around the best hits (top is 1)
    chunks: dict[str, Chunk]  # every chunk named above
    named: frozenset[str] = frozenset()  # files the task names
    described: tuple[dict[str, Any], ...] = ()  # what each mention matched, for the JSON output
    # path -> credit from similar past commits; None: the repository keeps too short a history
    # to have any (the feature then reads as unknown, not as no credit)
    precedent: dict[str, float] | None = None
    missed: int = 0  # the task's frames, paths and code names that matched nothing here


@dataclass(slots=True)
class Repository:
    """What the features read of the repository itself, the same for every query."""

    units: Mapping[str, Sequence[tuple[str, int, int]]]  # path -> (unit id, start, end), in order
    dates: Mapping[str, str]  # path -> last commit date (YYYY-MM-DD)
    centrality: Mapping[str, float]  # path -> its module's PageRank (mean 1 over modules)
    fan_in: Mapping[str, int]  # path -> modules importing its module
    names: Mapping[str, frozenset[str]] = field(default_factory=dict)  # path -> its definitions' name words
    newest: str = ""  # the newest date of ``dates``
    _days: dict[str, float] = field(default_factory=dict)

    def age(self, path: str) -> float:
        """log(1 + days between the repository's newest change and this file's last one)."""
        if path not in self._days:
            when, newest = self.dates.get(path, ""), self.newest or max(self.dates.values(), default="")
            try:
                days = (date.fromisoformat(newest) - date.fromisoformat(when)).days
            except ValueError:
                days = 365
            self._days[path] = math.log1p(max(days, 0))
        return self._days[path]


def repository_of(
    by_path: Mapping[str, Sequence[Located]],
    graph: GraphFacts | None,
    module_paths: Mapping[str, str],
    dates: Mapping[str, str],
) -> Repository:
    """What the features read of a repository: its units by file, its modules' centrality
    (PageRank over the mean) and importers, its definitions' name words and its files' dates."""
    metrics = {m.id: m for m in graph.modules} if graph else {}
    mean = sum(m.pagerank for m in metrics.values()) / len(metrics) if metrics else 1.0
    centrality = {
        path: metrics[module].pagerank / mean for module, path in module_paths.items() if module in metrics
    }
    fan_in = {path: metrics[module].fan_in for module, path in module_paths.items() if module in metrics}
    units = {path: [(u.id, u.start, u.end) for u in found] for path, found in by_path.items()}
    names = {
        path: frozenset(word for u in found for q in u.symbols for word in tokens(q.rsplit(".", 1)[-1]))
        for path, found in by_path.items()
    }
    return Repository(units, dates, centrality, fan_in, names, max(dates.values(), default=""))


_STRONG = frozenset({FRAME, PATH, COMMAND})
_DEFINITION = frozenset({CODE, NAME})
_TEXT = frozenset({MESSAGE, LINE, OPTION, SNIPPET})


def _positions(ids: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for position, cid in enumerate(ids, start=1):
        out.setdefault(cid, position)
    return out


def file_ranking(lexical: Sequence[tuple[str, float]], chunks: Mapping[str, Chunk]) -> list[str]:
    """Paths by the sum of their units' BM25 among the lexical hits, best first."""
    total: dict[str, float] = defaultdict(float)
    for cid, score in lexical:
        if cid in chunks:
            total[chunks[cid].path] += score
    return [p for p, _ in sorted(total.items(), key=lambda kv: (-kv[1], kv[0]))]


def file_features(signals: Signals, paths: Sequence[str], repo: Repository) -> list[list[float]]:
    """One row of :data:`FILE_FEATURES` per path."""
    chunks = signals.chunks
    best: dict[str, dict[str, int]] = defaultdict(dict)  # path -> signal -> its best rank
    counts: dict[str, int] = defaultdict(int)
    named: dict[str, set[int]] = defaultdict(set)
    for name, ranked in (
        ("lexical", [c for c, _ in signals.lexical]),
        ("vector", signals.vector),
        ("near", signals.near),
        ("cited", signals.cited),
    ):
        for position, cid in enumerate(ranked, start=1):
            if cid in chunks:
                best[chunks[cid].path].setdefault(name, position)
                if name == "lexical":
                    counts[chunks[cid].path] += 1
    for cid in signals.matched:
        if cid in chunks:
            named[chunks[cid].path].add(signals.matched_kinds.get(cid, SNIPPET))
    by_file = {p: i for i, p in enumerate(file_ranking(signals.lexical, chunks), start=1)}
    top_bm25 = max((s for _, s in signals.lexical), default=0.0) or 1.0
    file_bm25: dict[str, float] = {}
    for cid, score in signals.lexical:
        if cid in chunks:
            file_bm25.setdefault(chunks[cid].path, score)
    top_similarity = max(signals.similarity.values(), default=0.0)
    file_similarity: dict[str, float] = {}
    for cid, similarity in signals.similarity.items():
        if cid in chunks:
            path = chunks[cid].path
            file_similarity[path] = max(file_similarity.get(path, -1.0), similarity)
    query_words = set(tokens(signals.query))
    named_at: dict[str, int] = {}
    for position, cid in enumerate(signals.matched, start=1):
        if cid in chunks:
            named_at.setdefault(chunks[cid].path, position)
    precedent = signals.precedent
    top_precedent = max((precedent.get(p, 0.0) for p in paths), default=0.0) if precedent else 0.0
    top_precedent = top_precedent or 1.0
    rows = []
    for path in paths:
        ranks, kinds = best.get(path, {}), named.get(path, set())
        words = [w for w in dict.fromkeys(path_tokens(path)) if w not in ("py", "init")]
        stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0].strip("_").lower()
        rows.append(
            [
                rank_score(ranks.get("lexical")),
                rank_score(by_file.get(path)),
                file_bm25.get(path, 0.0) / top_bm25,
                math.log1p(counts.get(path, 0)),
                rank_score(ranks.get("vector")),
                file_similarity[path] - top_similarity if path in file_similarity else -1.0,
                float(bool(kinds & _STRONG)),
                float(bool(kinds & _DEFINITION)),
                float(bool(kinds & _TEXT)),
                math.log1p(sum(1 for cid in signals.matched if cid in chunks and chunks[cid].path == path)),
                rank_score(ranks.get("near")),
                rank_score(ranks.get("cited")),
                signals.lift.get(path, 0.0),
                sum(1 for w in words if w in query_words) / len(words) if words else 0.0,
                float(len(stem) > 2 and stem in query_words),
                math.log1p(len(repo.units.get(path, ()))),
                math.log(repo.centrality.get(path, 0.0) + 0.1),
                math.log1p(repo.fan_in.get(path, 0)),
                repo.age(path),
                float(path.endswith("__init__.py")),
                rank_score(named_at.get(path), 50),
                math.log1p(len(repo.names.get(path, frozenset()) & query_words)),
                math.nan if precedent is None else precedent.get(path, 0.0) / top_precedent,
            ]
        )
    return rows


def unit_features(
    signals: Signals,
    path: str,
    units: Sequence[tuple[str, int, int]],
    chunks: Mapping[str, Chunk],
    similarity: Mapping[str, float],
) -> list[list[float]]:
    """One row of :data:`UNIT_FEATURES` per unit of ``path`` (``units`` in line order;
    ``similarity``: unit id -> its vector similarity to the query, where known)."""
    ids = [u[0] for u in units]
    bm25 = {cid: signals.pool[cid] for cid in ids if cid in signals.pool}
    lexical_order = _positions(sorted(bm25, key=lambda c: (-bm25[c], c)))
    best_bm25 = max(bm25.values(), default=0.0) or 1.0
    known = {cid: similarity[cid] for cid in ids if cid in similarity}
    vector_order = _positions(sorted(known, key=lambda c: (-known[c], c)))
    best_similarity = max(known.values(), default=0.0)
    matched = set(signals.matched)
    near = set(signals.near)
    anchors = [
        (s, e)
        for cid, s, e in units
        if cid in lexical_order
        and lexical_order[cid] <= 2
        or cid in vector_order
        and vector_order[cid] <= 2
        or cid in matched
    ]
    groups = definition_groups(units, chunks)
    group_share: dict[str, float] = defaultdict(float)
    for cid, group in groups.items():
        group_share[group] = max(group_share[group], bm25.get(cid, 0.0) / best_bm25)
    query_words = set(tokens(signals.query))
    rows = []
    for index, (cid, start, end) in enumerate(units):
        chunk = chunks.get(cid)
        unit = chunk.unit if chunk is not None else "window"
        distance = min((max(0, s - end, start - e) for s, e in anchors), default=1000)
        rows.append(
            [
                rank_score(lexical_order.get(cid), 50),
                bm25.get(cid, 0.0) / best_bm25,
                rank_score(vector_order.get(cid), 50),
                known[cid] - best_similarity if cid in known else -1.0,
                float(cid in matched),
                float(cid in near),
                float(unit == "prelude"),
                float(unit == "class"),
                float(unit in ("function", "method")),
                float(unit == "window"),
                math.log1p(distance),
                math.log1p(chunk.tokens if chunk is not None else 0),
                float(index == 0),
                _share_named(groups.get(cid, ""), query_words),
                group_share.get(groups.get(cid, ""), 0.0),
            ]
        )
    return rows


def definition_groups(units: Sequence[tuple[str, int, int]], chunks: Mapping[str, Chunk]) -> dict[str, str]:
    """Unit id -> the qualified name of the definition it belongs to (a long definition is cut
    into pieces after its first, which carry no name of their own: they take the name of the
    piece they continue)."""
    out: dict[str, str] = {}
    previous, previous_end = "", -1
    for cid, start, end in units:
        chunk = chunks.get(cid)
        name = ""
        if chunk is not None and chunk.symbols:
            name = chunk.symbols[0]
        elif chunk is not None and chunk.unit not in ("prelude", "window") and start == previous_end + 1:
            name = previous
        if name:
            out[cid] = name
        previous, previous_end = name, end
    return out


def _share_named(qname: str, query_words: set[str]) -> float:
    """The share of the words of a definition's own name that the query uses."""
    words = set(tokens(qname.rsplit(".", 1)[-1])) if qname else set()
    return len(words & query_words) / len(words) if words else 0.0


def query_features(signals: Signals, frequencies: Mapping[str, int], total: int) -> list[float]:
    """One row of :data:`QUERY_FEATURES`: how much of the query the repository's text holds at
    all (the share of its distinct terms found, and that share weighed by each term's rarity),
    the best vector similarity (0 when lexical), how many things the task names the facts
    hold, and the number of terms."""
    terms = len(frequencies)
    found = sum(1 for n in frequencies.values() if n > 0)
    idf = {t: math.log(1 + total / (n + 1)) for t, n in frequencies.items()}
    everything = sum(idf.values())
    held = sum(v for t, v in idf.items() if frequencies[t] > 0)
    named = sum(1 for d in signals.described if d.get("how") != "text")
    return [
        found / terms if terms else 0.0,
        held / everything if everything else 0.0,
        max(signals.similarity.values(), default=0.0),
        math.log1p(named),
        math.log1p(terms),
    ]


def logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def confidence_features(
    query_row: Sequence[float],
    probabilities: Sequence[float],
    top_item: float = math.nan,
    top_coverage: float = math.nan,
    named: Sequence[Mapping[str, Any]] = (),
    missed: int = 0,
    first_is_file: bool = True,
) -> list[float]:
    """One row of :data:`CONFIDENCE_FEATURES`: the query's row, the file model's logit for its
    best file and that logit's lead over the second's (unknown when the ranking's first item is
    no file of the repository but a note or a view: the file model does not read those), the
    logit of the merged ranking's first score and the share of the query that item holds
    (unknown without a merge), whether the task names a definition exactly, whether it names a
    file of the repository (a traceback frame, a path), and of the files and definitions it
    names the share the repository holds; ``named``: what the task's mentions matched
    (:attr:`Signals.described`), ``missed``: how many matched nothing."""
    ordered = sorted(probabilities, reverse=True)
    first = bounded_logit(ordered[0]) if ordered else -LOGIT_BOUND
    # one candidate alone leads nothing: its lead is unknown, not the distance to zero
    margin = first - bounded_logit(ordered[1]) if len(ordered) > 1 else math.nan
    if not first_is_file:
        first = margin = math.nan
    item = bounded_logit(top_item) if top_item == top_item else math.nan
    hows = {d.get("how") for d in named}
    resolved = sum(1 for d in named if d.get("how") != "text")
    # of what the task names (files, frames, definitions), the share this repository holds
    held_names = resolved / (resolved + missed) if resolved + missed else math.nan
    exact, files = float(bool(hows & EXACT)), float(bool(hows & FILES))
    return [*query_row, first, margin, item, top_coverage, exact, files, held_names]


LOGIT_BOUND = 6.0  # logits the confidence reads are kept within +-6 (probabilities 0.0025 to 0.9975)


def bounded_logit(p: float) -> float:
    """``logit(p)`` within +-LOGIT_BOUND: no feature far outside what the model was fitted on."""
    return max(-LOGIT_BOUND, min(LOGIT_BOUND, logit(p)))


EXACT = frozenset({"qname", "reexport", "tail"})  # a mention matched to a definition by its name
FILES = frozenset({"frame", "path"})  # a mention matched to a file of the repository


def knowledge_evidence(team: Signals | None, chunks: dict[str, Chunk]) -> tuple[float, float]:
    """How well team knowledge answered a query: its best similarity (-1 without vectors) and
    the share of the query's words held by its best lexical hit."""
    if team is None:
        return -1.0, 0.0
    similarity = max(team.similarity.values(), default=-1.0)
    asked = set(tokens(team.query))
    if not team.lexical or not asked:
        return similarity, 0.0
    best = chunks[team.lexical[0][0]]
    held = set(tokens(best.heading + "\n" + best.text))
    return similarity, len(asked & held) / len(asked)
