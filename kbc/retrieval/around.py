"""What the fused ranking joins around its best units: the definitions around them, the code
the best views cite, each
parsed module's prelude, and the other units of the best files. Each adds the chunks it finds
to the ranking's ``chunks`` through ``load`` (the lexical index's reader)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from kbc.domain.models import Chunk
from kbc.index.tokens import tokens
from kbc.retrieval import rank
from kbc.retrieval.matched import Located, Matcher
from kbc.retrieval.neighbours import SymbolNeighbours
from kbc.retrieval.profiles import Profile
from kbc.retrieval.rank import expand, files_in_order, nearest_units

Load = Callable[[list[str]], dict[str, Chunk]]


def near_units(
    seeded: Sequence[str],
    chunks: dict[str, Chunk],
    neighbours: SymbolNeighbours,
    matcher: Matcher,
    load: Load,
) -> list[str]:
    """Units of the definitions around the seeds', strongest first."""
    names = [
        chunks[cid].symbols[0]
        for cid in seeded
        if cid in chunks and chunks[cid].symbols and chunks[cid].unit != "window"
    ]
    near = [cid for name in neighbours.around(names) if (cid := matcher.definition(name))]
    chunks.update(load([cid for cid in near if cid not in chunks]))
    return list(dict.fromkeys(near))


def cited_units(
    fused: Mapping[str, float],
    chunks: dict[str, Chunk],
    profile: Profile,
    text: str,
    by_path: Mapping[str, Sequence[Located]],
    load: Load,
) -> list[str]:
    """The code units the best view chunks cite, best view first, each view's citations on the
    lines sharing most words with the task (``text``) first: where a view found for the task
    points."""
    best = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[: rank.SEEDS]
    views = [
        cid
        for cid, _ in best
        if chunks[cid].kind == "view" and profile.weight("view", chunks[cid].role, chunks[cid].path) > 0
    ]
    terms = frozenset(tokens(text))
    found: list[str] = []
    for cid in views:
        for path, start, end in rank.citations(chunks[cid].text, terms=terms):
            found.extend(u.id for u in by_path.get(path, ()) if u.start <= end and start <= u.end)
    found = list(dict.fromkeys(found))
    chunks.update(load([cid for cid in found if cid not in chunks]))
    return found


def preludes(chunks: dict[str, Chunk], matcher: Matcher, load: Load) -> dict[str, str]:
    """Path -> prelude unit id of the candidates' parsed modules."""
    found = {
        path: cid for path in sorted({c.path for c in chunks.values()}) if (cid := matcher.prelude(path))
    }
    chunks.update(load([cid for cid in found.values() if cid not in chunks]))
    return found


def expanded(
    ranked: list[tuple[str, float]],
    chunks: dict[str, Chunk],
    bm25: dict[str, float],
    similar: Callable[[list[str]], dict[str, float]] | None,
    by_path: Mapping[str, Sequence[Located]],
    load: Load,
) -> list[tuple[str, float]]:
    """The ranking with the other units of its best files joined in, ordered by the query's
    BM25 (``bm25``: the lexical pool's scores) and, with vectors, their similarity (``similar``)."""
    if rank.EXPAND_SHARE <= 0:
        return ranked
    spans: dict[str, list[tuple[int, int]]] = {}
    for cid, _ in ranked:
        if cid in chunks:
            spans.setdefault(chunks[cid].path, []).append((chunks[cid].start_line, chunks[cid].end_line))
    units = {
        path: nearest_units(
            [(u.id, u.start, u.end) for u in by_path.get(path, [])], spans.get(path, []), bm25
        )
        for path in files_in_order(ranked, chunks, rank.EXPAND_FILES)
    }
    ids = [cid for found in units.values() for cid, _, _ in found]
    chunks.update(load([cid for cid in ids if cid not in chunks]))
    signals = [{cid: bm25[cid] for cid in ids if cid in bm25}]
    if similar is not None:
        signals.append(similar(ids))
    return expand(ranked, chunks, units, signals)
