"""Ranking by the fitted model (:mod:`kbc.retrieval.model`): each candidate file's probability
that a task changes it, weighed by the use case, times each of its units' probability relative
to the file's best."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

from kbc.domain.models import KNOWLEDGE_PREFIX, Chunk
from kbc.domain.views import VIEW_PREFIX
from kbc.retrieval import rank
from kbc.retrieval.features import Repository, Signals, file_features, unit_features
from kbc.retrieval.model import Ranker
from kbc.retrieval.profiles import Profile

UnitRows = Callable[[Signals, str], tuple[list[str], list[list[float]]]]  # every unit of a file, its rows


def candidate_paths(signals: Signals) -> list[str]:
    """The files (and view or knowledge documents) the model ranks: every one holding a chunk
    some signal found."""
    found = [
        *(c for c, _ in signals.lexical),
        *signals.vector,
        *signals.matched,
        *signals.near,
        *signals.cited,
    ]
    return sorted({signals.chunks[cid].path for cid in found if cid in signals.chunks})


_DOCUMENTS = (VIEW_PREFIX, KNOWLEDGE_PREFIX)  # paths of views and team knowledge: no repository file


def _repository_files(paths: Iterable[str]) -> list[str]:
    return [path for path in paths if not path.startswith(_DOCUMENTS)]


def file_probabilities(signals: Signals, ranker: Ranker, repository: Repository) -> list[float]:
    """The file model's probability for each candidate repository file (views and team
    knowledge left out): what the confidence reads of the ranking."""
    paths = _repository_files(candidate_paths(signals))
    return ranker.files.probabilities(file_features(signals, paths, repository)) if paths else []


def modelled(
    signals: Signals,
    profile: Profile,
    ranker: Ranker,
    repository: Repository,
    unit_rows: UnitRows,
    load: Callable[[list[str]], dict[str, Chunk]],
    unit_files: int,
) -> tuple[dict[str, float], list[float]]:
    """Chunk id -> score: the file model's probability that its file is one to change, weighed
    by the profile's weight of the file's role, times its unit's probability relative to the best
    of its file's (every unit of the ``unit_files`` best files is scored by ``unit_rows``; of the
    others, the chunks the searches found; ``load`` reads chunks not yet in the signals). Also
    the file model's probabilities of the candidate repository files (for the confidence)."""
    chunks = signals.chunks
    paths = candidate_paths(signals)
    if not paths:
        return {}, []
    probability = ranker.files.probabilities(file_features(signals, paths, repository))
    found: dict[str, list[str]] = defaultdict(list)
    for cid in sorted(chunks):
        found[chunks[cid].path].append(cid)
    every = repository.units
    unseen = [every[p][0][0] for p in paths if p not in found and every.get(p)]
    chunks.update(load([cid for cid in unseen if cid not in chunks]))
    holder = {chunks[cid].path: chunks[cid] for cid in unseen if cid in chunks}
    holder.update({path: chunks[ids[0]] for path, ids in found.items()})
    file_score = {}
    for path, p in zip(paths, probability, strict=True):
        weight = rank.weight_of(holder[path], profile, signals.named) if path in holder else 0.0
        if weight > 0:
            file_score[path] = p * weight
    ordered = sorted(file_score, key=lambda p: (-file_score[p], p))
    scored: dict[str, float] = {}
    for position, path in enumerate(ordered):
        if position < unit_files:
            ids, rows = unit_rows(signals, path)
        else:
            spans = {c: (chunks[c].start_line, chunks[c].end_line) for c in found.get(path, [])}
            units = sorted(((c, s, e) for c, (s, e) in spans.items()), key=lambda u: (u[1], u[0]))
            ids = [u[0] for u in units]
            similarity = {c: signals.similarity[c] for c in ids if c in signals.similarity}
            rows = unit_features(signals, path, units, chunks, similarity)
        if not ids:
            continue
        relative = ranker.units.probabilities(rows)
        top = max(relative) or 1.0
        for cid, p in zip(ids, relative, strict=True):
            scored[cid] = file_score[path] * p / top
    files = [p for path, p in zip(paths, probability, strict=True) if not path.startswith(_DOCUMENTS)]
    return scored, files
