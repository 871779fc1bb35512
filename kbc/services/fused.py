"""Retrieval across the repositories of a workspace: one slice under one budget.

Each repository ranks and packs the task at the whole budget; their items are then merged on
their scores, which are calibrated probabilities (:mod:`kbc.retrieval.corpora`) and so mean
the same in every repository: a task about two repositories gets the best of both, a
repository the task is not about trails (and below its confidence floor packs nothing at all).
Walking that merged order, every repository is allotted
the tokens of the items that fit (its slice header and file frames counted with its first
item); each repository's slice is then packed again into its allotment, from the same
ranking, and the sections are joined under one header. The slice never exceeds the budget
and, for the same stores, is the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kbc.domain.errors import KbcError
from kbc.index.tokencount import TokenCounter
from kbc.retrieval.results import Evidence, Slice, SliceItem, item_data
from kbc.services.querylog import below_floor
from kbc.services.reads import SearchHit, within
from kbc.services.workspace import Workspace

# Reciprocal-rank constant of the merge before items had calibrated scores (a rank's weight was
# confidence / (K + rank)): kept for comparison (``k``).
K = 60
UNESTIMATED = 1.0  # a repository's weight when its slice has no confidence estimate
HEADER_SLACK = 2  # tokens a slice's header may take beyond its own count once joined
Weigh = Callable[[Slice], float]


@dataclass(frozen=True, slots=True)
class Part:
    """One repository's answer to the task."""

    name: str
    found: Slice  # packed at the whole budget
    evidence: Evidence


def confidence_weight(found: Slice) -> float:
    """A repository's weight in the merge: its slice's confidence (1 when not estimated)."""
    return max(found.confidence, 0.01) if found.confidence >= 0 else UNESTIMATED


def calibrated(found: Slice) -> float:
    """A repository's weight when its items are merged on their own scores: 1 (each item's
    score is already the probability that it is what the task needs)."""
    return 1.0


def _merged(parts: Sequence[Part], weigh: Weigh, k: int = K) -> list[tuple[str, SliceItem]]:
    """Every repository's items, best first: its weight times each item's score (a calibrated
    probability, the same scale in every repository) when ``k`` is 0; else its weight over
    ``k`` + rank within its repository (reciprocal-rank fusion)."""
    scored: list[tuple[float, str, int, SliceItem]] = []
    for part in parts:
        weight = weigh(part.found)
        ranked = sorted(enumerate(part.found.items), key=lambda pair: (-pair[1].score, pair[0]))
        for rank, (_, item) in enumerate(ranked):
            key = weight * item.score if k <= 0 else weight / (k + rank + 1)
            scored.append((key, part.name, rank, item))
    scored.sort(key=lambda row: (-row[0], row[1], row[2]))
    return [(name, item) for _, name, _, item in scored]


def _allotments(
    parts: Sequence[Part],
    limit: int,
    separator: dict[str, int],
    counter: TokenCounter,
    weigh: Weigh,
    k: int = K,
) -> dict[str, int]:
    """Tokens each repository may pack: its share of the merged order that fits in ``limit``
    (an item's tokens count its file's title; a repository's first also its slice's header)."""
    frame = {p.name: counter.count(p.found.text.split("\n## ", 1)[0] + "\n") + HEADER_SLACK for p in parts}
    allotted: dict[str, int] = {}
    used = 0
    for name, item in _merged(parts, weigh, k):
        extra = item.tokens + (0 if name in allotted else frame[name] + separator[name])
        if used + extra > limit:
            continue
        allotted[name] = allotted.get(name, 0) + extra
        used += extra
    return allotted


def retrieve_across(  # noqa: PLR0913 - a retrieval's request, as every interface passes it
    workspace: Workspace,
    task: str,
    use_case: str = "implementation",
    budget: int | None = None,
    *,
    names: Sequence[str] | None = None,
    scopes: Sequence[str] | None = None,
    min_confidence: float | None = None,
    weigh: Weigh = calibrated,
    k: int = 0,
    reserve: int = 0,
) -> dict[str, Any]:
    """The slice of ``task`` across ``names`` (default: every repository with a build), as the
    retrieve payload: each item names its ``repository``; ``repositories`` gives each one's
    tokens and confidence, ``behind`` those whose store is behind their repository.
    ``weigh`` gives a repository's weight in the merge from its slice; ``k`` 0 merges the items
    on their calibrated scores, else by reciprocal rank with that constant (what the merge was
    before the scores were calibrated); ``reserve`` tokens of the budget are left unpacked (for
    what an interface adds after the slice)."""
    chosen = list(names) if names else workspace.names()
    parts: list[Part] = []
    skipped: list[str] = []
    budget_asked = budget
    for name in chosen:  # one store open at a time: twenty repositories never hold twenty open
        try:
            with workspace.using(name) as kb:
                budget = kb.use_cases.named(use_case).budget if budget_asked is None else budget_asked
                budget = max(1, budget - reserve)
                found, evidence = kb.slice_for(
                    task, use_case, budget, scopes=scopes, min_confidence=min_confidence
                )
        except KbcError as error:
            if names:
                raise
            skipped.append(f"{name}: {error.message}")
            continue
        parts.append(Part(name, found, evidence))
    if not parts or budget is None:
        raise KbcError("no repository of this server has a build yet", hint="; ".join(skipped))
    counter = workspace.components.token_counter()
    header = (
        f"# kbc slice · {use_case} · across {len(parts)} repositories "
        f"({', '.join(p.name for p in parts)}) · budget {budget} tokens\n"
    )
    separators = {p.name: f"\n## repository: {p.name}\n\n" for p in parts}
    sizes = {name: counter.count(text) for name, text in separators.items()}
    limit = budget - counter.count(header)
    if limit < 1:
        raise KbcError(
            f"budget {budget} is smaller than a slice's header",
            hint="give a budget of a few hundred tokens or more",
        )
    allotted = _allotments(parts, limit, sizes, counter, weigh, k)
    order = list(dict.fromkeys(name for name, _ in _merged(parts, weigh, k) if name in allotted))
    sections: list[tuple[str, Slice]] = []
    for name in order:
        try:
            with workspace.using(name) as kb:
                packed, _ = kb.slice_for(
                    task, use_case, allotted[name] - sizes[name], scopes=scopes, min_confidence=min_confidence
                )
        except KbcError:
            continue  # an allotment below its slice's header: the repository is left out
        sections.append((name, packed))
    text = header + "".join(separators[name] + packed.text for name, packed in sections)
    while sections and counter.count(text) > budget:  # a join tokenized differently: drop the last
        sections.pop()
        text = header + "".join(separators[name] + packed.text for name, packed in sections)
    gap = all(below_floor(p.evidence, p.found) for p in parts)
    logged = []
    for part in parts:
        with workspace.using(part.name) as kb:
            own_id = kb.queries.record("retrieve", task, use_case, part.evidence, gap=gap, found=part.found)
        logged.append((part.name, own_id, frozenset(i.id for i in part.found.items)))
    query_id = "ws-" + hashlib.sha256("\0".join(q for _, q, _ in logged).encode()).hexdigest()[:16]
    workspace.remember(query_id, tuple(logged))
    return _payload(
        parts,
        sections,
        text,
        counter.count(text),
        use_case,
        budget,
        skipped,
        workspace.behind([p.name for p in parts]),
        query_id,
        task,
    )


def _payload(  # noqa: PLR0913 - the parts of one answer, assembled once
    parts: Sequence[Part],
    sections: Sequence[tuple[str, Slice]],
    text: str,
    tokens: int,
    use_case: str,
    budget: int,
    skipped: Sequence[str],
    behind: Sequence[str],
    query_id: str,
    task: str,
) -> dict[str, Any]:
    confidences = [p.found.confidence for p in parts if p.found.confidence >= 0]
    confidence = max(confidences) if confidences else -1.0
    modes = {p.found.retrieval for p in parts}
    notes = [f"{p.name}: {p.found.note}" for p in parts if p.found.note]
    notes += [f"left out {s}" for s in skipped]
    notes += [
        f"{name}: its store is behind its repository (a refresh is queued or needed)" for name in behind
    ]
    items = [dict(item_data(i), repository=name) for name, packed in sections for i in packed.items]
    matched = [dict(m, repository=name) for name, packed in sections for m in packed.matched]
    fingerprint = hashlib.sha256(
        json.dumps([use_case, budget, task, [(n, s.fingerprint) for n, s in sections]]).encode()
    ).hexdigest()[:16]
    return {
        "use_case": use_case,
        "budget": budget,
        "tokens": tokens,
        "fingerprint": fingerprint,
        "retrieval": "hybrid" if modes == {"hybrid"} else "lexical",
        "note": "; ".join(notes),
        "confidence": round(confidence, 3),
        "low_confidence": all(p.found.low_confidence for p in parts),
        "matched": matched,
        "items": items,
        "text": text,
        "query_id": query_id,
        "repositories": [
            {
                "name": p.name,
                "confidence": round(p.found.confidence, 3),
                "low_confidence": p.found.low_confidence,
                "retrieval": p.found.retrieval,
                "tokens": next((s.tokens for n, s in sections if n == p.name), 0),
                "behind": p.name in behind,
            }
            for p in parts
        ],
    }


def search_across(
    workspace: Workspace,
    query: str,
    k: int = 10,
    use_case: str = "implementation",
    names: Sequence[str] | None = None,
    budget: int | None = None,
) -> list[SearchHit]:
    """The top ``k`` hits across repositories, merged on their calibrated scores; each names its
    ``repository``; with ``budget``, as many as their texts fit in that many tokens."""
    scored: list[tuple[float, str, int, SearchHit]] = []
    for name in list(names) if names else workspace.names():
        try:
            with workspace.using(name) as kb:
                hits = kb.search(query, k, use_case)
        except KbcError:
            if names:
                raise
            continue
        scored.extend((hit.score, name, rank, replace(hit, repository=name)) for rank, hit in enumerate(hits))
    scored.sort(key=lambda row: (-row[0], row[1], row[2]))
    return within(
        [hit for *_, hit in scored[: max(1, k)]], budget, workspace.components.token_counter().count
    )


def named(data: dict[str, Any], name: str, workspace: Workspace) -> dict[str, Any]:
    """A slice of one repository of a workspace, saying in its note when the store is behind
    the repository (HEAD moved since the build, or a push not yet brought in); when the
    workspace serves several, naming the repository, on every item too."""
    note = data.get("note", "")
    if workspace.behind([name]):
        said = (
            f"{name}: its store is behind its repository (HEAD moved since the build, or a "
            "push is not in yet): refresh it (MCP refresh, `kbc refresh`)"
        )
        note = f"{note}; {said}" if note else said
    if workspace.single() is not None:
        return {**data, "note": note} if note != data.get("note", "") else data
    return {
        **data,
        "note": note,
        "repository": name,
        "items": [dict(item, repository=name) for item in data.get("items", [])],
    }


def symbols_across(workspace: Workspace, name: str) -> list[dict[str, Any]]:
    """Where ``name`` is defined in every repository with a build; each match names its
    ``repository``."""
    from kbc.services.payloads import symbols_data

    found: list[dict[str, Any]] = []
    for repository in workspace.names():
        try:
            with workspace.using(repository) as kb:
                found.extend(
                    dict(match, repository=repository) for match in symbols_data(kb.reads.symbol(name))
                )
        except KbcError:
            continue
    return found
