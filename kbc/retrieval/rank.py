"""Ranking: reciprocal-rank fusion, profile weights, a graph boost, near-duplicate removal."""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from collections.abc import Container, Iterable, Mapping, Sequence

from kbc.domain.models import OUTSIDE_KINDS, Chunk, GraphFacts
from kbc.index.tokens import tokens
from kbc.retrieval.profiles import Profile

# The fitted model (kbc.retrieval.model) ranks the candidates the searches found; False: the
# hand-weighted fusion below, kept for comparison (benchmarks/localization.py --constant).
MODEL = False  # True: the fitted model ranks (below this fusion on unseen issues: RESULTS.md)
# Corpora (code, tests, docs, views, team knowledge) merged on calibrated scores
# (kbc.retrieval.corpora); False: one list, each score times its role's weight.
MERGE = True
UNIT_FILES = 5  # the best files every unit of which the model scores (of the others: the units found)

RRF_K = 60
SEEDS = 10  # the best fused hits whose graph neighbourhood is lifted
# A view found among the best hits points at code: the units it cites (`path:start-end`) are
# lifted at the profile's ``cited`` weight, by the order they are cited in (0 here: never).
CITED_WEIGHT = 1.0
CITED_PER_VIEW = 8  # the first citations of one view chunk that are followed
FILE_EVIDENCE = True
FILE_EVIDENCE_UNITS = 0  # a file's best units summed for its evidence (0: all of them)
MATCHED_WEIGHT = 1.0  # of the list of what the query names, against the searches' lists
FILE_LIFT = True
PRELUDE_SHARE = 0.8
EXPAND_FILES = 5  # the best files whose other units join the ranking
EXPAND_SHARE = 0.5  # of a file's best score, where its other units start (0: no expansion)
# Of a file's units, at most about this many (those nearest its found ones, and those the
# searches scored) are weighed: a generated file of tens of thousands of one-line functions
# costs a slice no more than a long module does. Set above what a module written by hand
# holds, so that only such files are cut.
UNITS_NEAR = 1500
COCHANGE_WEIGHT = 0.0  # of files changed together by a commit (0: off; see RESULTS.md)
# The files past commits like the task changed (kbc.retrieval.precedent), one more ranked list
# of files at this weight (0: off). Off: at 0.5, the weight chosen leaving one development
# repository out, it did not help on repositories it was not chosen on (RESULTS.md); the
# fitted model reads the same credit as its ``precedent`` feature.
PRECEDENT_WEIGHT = 0.0
SPREAD_FILES = 3  # the best files whose best unit is packed before the rest (0: rank order)
SPREAD_SHARE = 0.35  # of the budget the heads packed first may take together (0: the first file's only)


def rrf(rankings: Iterable[Sequence[str]], k: int = RRF_K) -> dict[str, float]:
    """Reciprocal-rank fusion: sum of 1 / (k + rank) over the rankings (rank from 1)."""
    fused: dict[str, float] = defaultdict(float)
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            fused[item] += 1.0 / (k + rank)
    return dict(fused)


class FileGraph:
    """Files linked by imports and calls, for query-personalised PageRank.

    The transition matrix is built once from the weighted links, as a scipy sparse matrix,
    so each query's personalised PageRank is a few sparse products, not a rebuild of the
    graph (no graph library is loaded to serve: the matrix is the one networkx builds).
    """

    def __init__(self, nodes: Iterable[str], links: Mapping[tuple[str, str], float]) -> None:
        """``links``: the weight of each link between two files (one entry per pair)."""
        import scipy.sparse

        self.nodes: list[str] = sorted({*nodes, *(end for pair in links for end in pair)})
        self.index = {node: i for i, node in enumerate(self.nodes)}
        self.has_edges = bool(links)
        if not self.nodes:  # a repository without parsed code: nothing to lift
            self.nodes, self.index = [""], {}
        rows: list[int] = []
        columns: list[int] = []
        weights: list[float] = []
        for (a, b), weight in links.items():  # symmetric: the graph is undirected
            ends = [(a, b)] if a == b else [(a, b), (b, a)]
            for one, other in ends:
                rows.append(self.index[one])
                columns.append(self.index[other])
                weights.append(weight)
        size = len(self.nodes)
        matrix = scipy.sparse.coo_array((weights, (rows, columns)), shape=(size, size)).asformat("csr")
        out_weight = matrix.sum(axis=1)
        self.dangling = out_weight == 0
        scale = [1.0 / w if w else 0.0 for w in out_weight]
        # column-stochastic: transition[j, i] = weight(i -> j) / out_weight(i)
        self.transition = (scipy.sparse.diags(scale) @ matrix).T.tocsr()

    @classmethod
    def from_facts(
        cls,
        graph: GraphFacts,
        module_paths: Mapping[str, str],
        symbol_paths: Mapping[str, str],
        cochange: Mapping[tuple[str, str], float] | None = None,
    ) -> FileGraph:
        weights: dict[tuple[str, str], float] = defaultdict(float)
        for edge in graph.import_edges:
            a, b = module_paths.get(edge.source), module_paths.get(edge.target)
            if a and b and a != b:
                weights[(min(a, b), max(a, b))] += 1.0
        for edge in graph.call_edges:
            a, b = edge.path, symbol_paths.get(edge.target)
            if a and b and a != b:
                weights[(min(a, b), max(a, b))] += 0.5 * len(edge.lines)
        known = set(module_paths.values())
        if cochange and COCHANGE_WEIGHT > 0:
            for (a, b), weight in cochange.items():
                if a in known and b in known:
                    weights[(a, b)] += COCHANGE_WEIGHT * weight
        links: dict[tuple[str, str], float] = {}
        for (a, b), weight in sorted(weights.items()):  # a pair given both ways: the last one holds
            links[(min(a, b), max(a, b))] = weight
        return cls(known, links)

    def personalised(
        self,
        seeds: Mapping[str, float],
        alpha: float = 0.85,
        tolerance: float = 1e-6,
        max_iterations: int = 100,
    ) -> dict[str, float]:
        """PageRank personalised on ``seeds`` (path -> weight), scaled so the top is 1."""
        import numpy as np

        present = {self.index[p]: w for p, w in seeds.items() if p in self.index and w > 0}
        if not present or not self.has_edges:
            return {}
        teleport = np.zeros(len(self.nodes))
        for i, weight in present.items():
            teleport[i] = weight
        teleport /= teleport.sum()
        rank = teleport.copy()
        for _ in range(max_iterations):
            dangling_mass = rank[self.dangling].sum()
            updated = alpha * (self.transition @ rank + dangling_mass * teleport) + (1 - alpha) * teleport
            converged = np.abs(updated - rank).sum() < tolerance
            rank = updated
            if converged:
                break
        top = rank.max()
        if top <= 0:
            return {}
        return {self.nodes[i]: float(r / top) for i, r in enumerate(rank) if r > 0}


def file_ranking(lexical: Sequence[tuple[str, float]], chunks: Mapping[str, Chunk]) -> dict[str, int]:
    """Files ranked by the lexical evidence of all their units together (the sum of their
    BM25 scores among the hits, or of their ``FILE_EVIDENCE_UNITS`` best): a file about the
    task outranks one unit that shares words with it. A view is a file of its own, so it
    competes on the same terms. Path -> rank from 1."""
    counted: dict[str, list[float]] = defaultdict(list)
    for cid, score in lexical:
        if cid in chunks:
            counted[chunks[cid].path].append(score)
    limit = FILE_EVIDENCE_UNITS or None
    total = {path: sum(sorted(scores, reverse=True)[:limit]) for path, scores in counted.items()}
    ordered = sorted(total.items(), key=lambda kv: (-kv[1], kv[0]))
    return {path: index for index, (path, _) in enumerate(ordered, start=1)}


def fuse(
    lexical: Sequence[tuple[str, float]],
    vector: Sequence[str],
    matched: Sequence[str],
    chunks: Mapping[str, Chunk],
    precedent: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """Reciprocal-rank fusion of the lexical hits, the vector hits, what the query named,
    the files' lexical evidence and the files past commits like the task changed (``precedent``:
    path -> credit; each unit of the hits ranked by its file in the last two)."""
    fused = rrf([[cid for cid, _ in lexical], list(vector)])
    for cid, score in rrf([list(matched)]).items():
        fused[cid] = fused.get(cid, 0.0) + MATCHED_WEIGHT * score
    if FILE_EVIDENCE:
        by_file = file_ranking(lexical, chunks)
        for cid in fused:
            if cid in chunks and chunks[cid].path in by_file:
                fused[cid] += 1.0 / (RRF_K + by_file[chunks[cid].path])
    if precedent and PRECEDENT_WEIGHT > 0:
        ordered = sorted(precedent.items(), key=lambda kv: (-kv[1], kv[0]))
        by_credit = {path: position for position, (path, _) in enumerate(ordered, start=1)}
        for cid in fused:
            if cid in chunks and chunks[cid].path in by_credit:
                fused[cid] += PRECEDENT_WEIGHT / (RRF_K + by_credit[chunks[cid].path])
    return {cid: score for cid, score in fused.items() if cid in chunks}


def seeds(fused: Mapping[str, float], matched: Sequence[str], count: int = SEEDS) -> list[str]:
    """The units whose neighbours are lifted: what the query named, then the best fused."""
    best = [cid for cid, _ in sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:count]]
    return list(dict.fromkeys([*matched[:count], *best]))


_CITATION = re.compile(r"([\w./-]+\.\w+):(\d+)(?:-(\d+))?")


def citations(
    text: str, limit: int = CITED_PER_VIEW, terms: frozenset[str] = frozenset()
) -> list[tuple[str, int, int]]:
    """The first ``limit`` distinct ``path:start-end`` (or ``path:line``) a view's text cites,
    those on the lines sharing the most of ``terms`` (the query's search tokens) first, then
    in the order cited: a table of a component's symbols is followed at its rows the task is
    about, not at its first rows."""
    lines = text.splitlines()
    order = (
        sorted(range(len(lines)), key=lambda i: -len(terms.intersection(tokens(lines[i]))))
        if terms
        else range(len(lines))
    )
    found: dict[tuple[str, int, int], None] = {}
    for i in order:
        for match in _CITATION.finditer(lines[i]):
            start = int(match.group(2))
            found.setdefault((match.group(1), start, int(match.group(3) or start)), None)
            if len(found) >= limit:
                return list(found)
    return list(found)


def finish(  # noqa: PLR0913 - the ranking's signals, each a list of its own
    fused: Mapping[str, float],
    near: Sequence[str],
    chunks: Mapping[str, Chunk],
    profile: Profile,
    files: FileGraph | None,
    preludes: Mapping[str, str] | None = None,
    cited: Sequence[str] = (),
    keys: dict[str, str] | None = None,
    named: frozenset[str] = frozenset(),
) -> list[tuple[str, float]]:
    """Final scores, best first (ties by id): the neighbours of the seeds (``near``, a ranked
    list of unit ids) fused in at the profile's graph weight and the code the best views cite
    (``cited``, ranked) at its view weight, every unit weighed by the role of its file (a file
    the task names, ``named``, whose role the profile leaves out, weighs as code), then lifted
    by its file's personalised PageRank. ``keys`` keeps each chunk's text as compared for
    duplicates, for a caller that ranks the same chunks again."""
    combined = dict(fused)
    for position, cid in enumerate(near, start=1):
        if cid in chunks:
            combined[cid] = combined.get(cid, 0.0) + profile.graph / (RRF_K + position)
    for position, cid in enumerate(cited, start=1):
        if cid in chunks:
            combined[cid] = combined.get(cid, 0.0) + CITED_WEIGHT * profile.cited / (RRF_K + position)
    weighed = {
        cid: (score, weight_of(chunks[cid], profile, named))
        for cid, score in combined.items()
        if cid in chunks
    }
    scored = {cid: score * weight for cid, (score, weight) in weighed.items() if weight > 0}
    # Team knowledge, ranked as a corpus of its own, takes no part in the code's file lift.
    code = {cid: score for cid, score in scored.items() if chunks[cid].kind != "knowledge"}
    lift = _lift(code, chunks, files) if FILE_LIFT and profile.graph > 0 else {}
    if lift:
        top = max(code.values())
        scored = {cid: s + profile.graph * top * lift.get(chunks[cid].path, 0.0) for cid, s in scored.items()}
    if preludes:
        _follow_preludes(scored, chunks, preludes)
    ordered = sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))
    return drop_duplicates(ordered, chunks, {} if keys is None else keys)


def _lift(
    code: Mapping[str, float], chunks: Mapping[str, Chunk], files: FileGraph | None
) -> dict[str, float]:
    """Personalised PageRank over the file graph, seeded by the files of the ``SEEDS`` best
    scored units (path -> lift, the top 1)."""
    if files is None or not code:
        return {}
    weights: dict[str, float] = defaultdict(float)
    for cid, score in sorted(code.items(), key=lambda kv: (-kv[1], kv[0]))[:SEEDS]:
        weights[chunks[cid].path] += score
    return files.personalised(weights)


def lift_of(
    fused: Mapping[str, float],
    chunks: Mapping[str, Chunk],
    profile: Profile,
    files: FileGraph | None,
    named: frozenset[str] = frozenset(),
) -> dict[str, float]:
    """The graph's lift of each file around the best fused hits, each weighed by its role (the
    model's ``lift`` feature); none when the profile's graph weight is 0."""
    if profile.graph <= 0:
        return {}
    code = {
        cid: score * weight
        for cid, score in fused.items()
        if cid in chunks
        and chunks[cid].kind != "knowledge"
        and (weight := weight_of(chunks[cid], profile, named)) > 0
    }
    return _lift(code, chunks, files)


def weight_of(chunk: Chunk, profile: Profile, named: frozenset[str] = frozenset()) -> float:
    """The profile's weight of a chunk's kind and role; a role the profile leaves out (weight
    0) weighs as code in a file the task names."""
    weight = profile.weight(chunk.kind, chunk.role, chunk.path)
    if weight <= 0 and chunk.path in named and chunk.kind not in OUTSIDE_KINDS:
        return profile.code
    return weight


def _follow_preludes(
    scored: dict[str, float], chunks: Mapping[str, Chunk], preludes: Mapping[str, str]
) -> None:
    """A module's imports and constants are what an edit anywhere in it must know: each file's
    prelude ranks at ``PRELUDE_SHARE`` of the file's best unit, if not above it already."""
    best: dict[str, float] = {}
    for cid, score in scored.items():
        path = chunks[cid].path
        if preludes.get(path) != cid and score > best.get(path, 0.0):
            best[path] = score
    for path, score in best.items():
        prelude = preludes.get(path, "")
        if prelude in chunks:
            scored[prelude] = max(scored.get(prelude, 0.0), PRELUDE_SHARE * score)


def files_in_order(ranked: Sequence[tuple[str, float]], chunks: Mapping[str, Chunk], limit: int) -> list[str]:
    """The first ``limit`` repository files of a ranking, in the order their best unit ranks
    (view and knowledge documents are not files of the repository)."""
    files: list[str] = []
    for cid, _ in ranked:
        chunk = chunks[cid]
        if chunk.kind not in OUTSIDE_KINDS and chunk.path not in files:
            files.append(chunk.path)
            if len(files) == limit:
                break
    return files


def spread(
    ranked: Sequence[tuple[str, float]],
    chunks: Mapping[str, Chunk],
    files: int | None = None,
    budget: int | None = None,
    share: float | None = None,
) -> list[tuple[str, float]]:
    """The ranking in packing order: the best unit of each of its first ``files`` files (a team
    note is a document of its own; views are not heads), in rank order, then the rest in rank
    order. A small budget then holds the head of
    each leading candidate, not only the first file's lesser units; the order of the files
    (by their best unit) is unchanged. With a ``budget``, a runner-up's head moves ahead only
    while the heads moved so far, with it, take at most ``share`` of the budget: a budget too
    small for every head keeps the first file's own units."""
    files = SPREAD_FILES if files is None else files
    share = SPREAD_SHARE if share is None else share
    room = None if budget is None else share * budget
    heads: dict[str, str] = {}
    taken = 0
    for cid, _ in ranked:
        if len(heads) >= files:
            break
        chunk = chunks[cid]
        if chunk.kind == "view" or chunk.path in heads:
            continue
        taken += chunk.tokens
        if heads and room is not None and taken > room:
            break
        heads[chunk.path] = cid
    first = set(heads.values())
    return [item for item in ranked if item[0] in first] + [item for item in ranked if item[0] not in first]


def expand(
    ranked: Sequence[tuple[str, float]],
    chunks: Mapping[str, Chunk],
    units: Mapping[str, Sequence[tuple[str, int, int]]],
    signals: Sequence[Mapping[str, float]] = (),
    share: float | None = None,
) -> list[tuple[str, float]]:
    """The ranking with the other units of its best files (``units``: path -> (id, start,
    end) of every unit of the file) joined in: a file the task is about is likely to need
    more of its code than the searches found (the line to change often sits in a unit that
    shares few words with the task). A file's other units are ordered by reciprocal-rank
    fusion of their nearness to its ranked units and of each of ``signals`` (unit id ->
    relevance, higher better: the query's BM25 and vector similarity over those units),
    and rank as a list of their own at ``share`` of the file's best score."""
    share = EXPAND_SHARE if share is None else share
    if share <= 0 or not units:
        return list(ranked)
    scored = dict(ranked)
    best: dict[str, float] = {}
    taken: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for cid, score in ranked:
        chunk = chunks[cid]
        best.setdefault(chunk.path, score)
        taken[chunk.path].append((chunk.start_line, chunk.end_line))
    for path, found in units.items():
        if path not in best:
            continue
        spans = taken[path]
        others = [u for u in found if u[0] not in scored and u[0] in chunks]
        orders = [[u[0] for u in sorted(others, key=lambda u: (_distance(u[1], u[2], spans), u[1], u[0]))]]
        for signal in signals:
            present = [u for u in others if u[0] in signal]
            orders.append([u[0] for u in sorted(present, key=lambda u: (-signal[u[0]], u[1], u[0]))])
        fused = rrf(orders)
        ordered = sorted(fused, key=lambda cid: (-fused[cid], cid))
        for position, cid in enumerate(ordered):
            scored[cid] = share * best[path] * (RRF_K + 1) / (RRF_K + 1 + position)
    return sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))


def nearest_units(
    units: Sequence[tuple[str, int, int]],
    spans: Sequence[tuple[int, int]],
    keep: Container[str] = (),
    limit: int = UNITS_NEAR,
) -> list[tuple[str, int, int]]:
    """``units`` (id, start, end, in line order) when there are at most ``limit``; else the
    ``limit`` nearest to ``spans`` (by position in the file, nearest first on both sides of
    each) and every unit in ``keep``, in line order."""
    if len(units) <= limit:
        return list(units)
    starts = [u[1] for u in units]
    anchors = sorted({max(0, bisect.bisect_right(starts, start) - 1) for start, _ in spans}) or [0]
    chosen: set[int] = set()
    radius = 0
    while len(chosen) < limit and radius < len(units):
        for anchor in anchors:
            chosen.update(i for i in (anchor - radius, anchor + radius) if 0 <= i < len(units))
        radius += 1
    chosen.update(i for i, unit in enumerate(units) if unit[0] in keep)
    return [units[i] for i in sorted(chosen)]


def _distance(start: int, end: int, spans: Sequence[tuple[int, int]]) -> int:
    """Lines between ``start..end`` and the nearest of ``spans`` (0 when they touch)."""
    return min(max(0, s - end, start - e) for s, e in spans)


def rank(
    lexical: Sequence[tuple[str, float]],
    vector: Sequence[str],
    matched: Sequence[str],
    chunks: Mapping[str, Chunk],
    profile: Profile,
    files: FileGraph | None,
    near: Sequence[str] = (),
) -> list[tuple[str, float]]:
    """Chunk ids with final scores, best first; deterministic (ties by id)."""
    return finish(fuse(lexical, vector, matched, chunks), near, chunks, profile, files)


def drop_duplicates(
    ordered: list[tuple[str, float]], chunks: Mapping[str, Chunk], keys: dict[str, str]
) -> list[tuple[str, float]]:
    """Keep the first of chunks whose text is the same but for white space."""
    seen: set[str] = set()
    kept = []
    for cid, score in ordered:
        key = keys.get(cid)
        if key is None:
            key = keys[cid] = " ".join(chunks[cid].text.split())
        if key in seen:
            continue
        seen.add(key)
        kept.append((cid, score))
    return kept
