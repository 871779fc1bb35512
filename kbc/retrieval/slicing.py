"""What a slice says besides its code: its header, how each document is titled and dated, its
items, and how many team-knowledge sections the budget left out."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence

from kbc.domain.models import Chunk
from kbc.retrieval.pack import Packed
from kbc.retrieval.profiles import Profile
from kbc.retrieval.results import Evidence, Ranking, SliceItem

LEFT_OUT_RANKS = 50  # the first ranks where a team-knowledge section left out by the budget is counted


class Titles:
    """How each file is dated in a slice's titles (path -> date), and which documents are
    behind the code, and why."""

    def __init__(self, dates: Mapping[str, str]) -> None:
        self.dates = dates
        self.labels: Mapping[str, str] = dates
        self.behind: dict[str, str] = {}  # document -> why it is behind the code

    def mark_behind(self, notes: Mapping[str, str]) -> None:
        """Say in a slice's titles which documents are behind the code, and why (path ->
        reason): ``## docs/x.md (doc · last commit 2026-11-30 · behind the code: ...)``."""
        self.behind = dict(notes)
        labels = dict(self.dates)
        for path, note in notes.items():
            dated = self.dates.get(path, "")
            labels[path] = f"{dated} · behind the code: {note}" if dated else f"behind the code: {note}"
        self.labels = labels

    def marks(self, path: str, kind: str) -> tuple[str, str]:
        """A document's date as a slice's title gives it, and why it is behind the code ("" for
        code, which the title alone dates)."""
        if kind not in ("knowledge", "doc"):
            return "", ""
        date = self.dates.get(path, "")
        return (f"last commit {date}" if date[:1].isdigit() else date), self.behind.get(path, "")


POINTERS = 3  # the nearest matches a slice below its floor points at


def pointers(found: Ranking) -> list[str]:
    """The first ``POINTERS`` passages of a ranking, as ``path:start-end``: what a slice with
    nothing relevant points at."""
    out: list[str] = []
    for cid, _ in found.ranked:
        chunk = found.chunks[cid]
        where = f"{chunk.path}:{chunk.start_line}-{chunk.end_line}"
        if where not in out:
            out.append(where)
        if len(out) == POINTERS:
            break
    return out


def header(
    use_case: str,
    budget: int,
    mode: str,
    note: str,
    evidence: Evidence,
    rerank: str,
    min_confidence: float | None,
    nearest: Sequence[str] = (),
) -> str:
    """A slice's first line (and, when the confidence is below the minimum asked, or below the
    floor when none is asked, why nothing is packed and where the nearest matches are)."""
    said = ""
    if evidence.confidence >= 0:
        said = f" · confidence {evidence.confidence:.2f}" + (" (low)" if evidence.low_confidence else "")
    said += f" · {rerank}" if rerank else ""
    noted = f" ({note})" if note and mode == "lexical" else ""
    text = f"# kbc slice · {use_case} · budget {budget} tokens · retrieval: {mode}{noted}{said}\n"
    if min_confidence is None and evidence.low_confidence:
        read = evidence.relevance if evidence.relevance >= 0 else evidence.confidence
        what = "relevance" if evidence.relevance >= 0 else "confidence"
        words = f"{evidence.held:.0%} of the task's words, " if evidence.held >= 0 else ""
        text += (
            f"Nothing relevant: little in this repository matches the task ({words}{what} "
            f"{read:.2f} below the floor {evidence.floor:.2f}; minimum confidence 0 packs the "
            "nearest matches).\n"
        )
    elif min_confidence is not None and 0 <= evidence.confidence < min_confidence:
        text += (
            f"Nothing packed: the confidence {evidence.confidence:.2f} is below the minimum asked, "
            f"{min_confidence:.2f}; little in this repository matches the task.\n"
        )
    else:
        return text
    if nearest:
        text += f"Nearest matches: {', '.join(nearest)}.\n"
    return text


def items_of(packed: Packed, titles: Titles) -> tuple[SliceItem, ...]:
    """The printed blocks as a slice's items."""
    items = []
    for b in packed.blocks:
        date, behind = titles.marks(b.path, b.kind)
        items.append(
            SliceItem(
                id=b.chunks[0],
                path=b.path,
                start_line=b.start,
                end_line=b.end,
                kind=b.kind,
                score=b.score,
                tokens=b.tokens,
                date=date,
                behind=behind,
            )
        )
    return tuple(items)


def knowledge_left_out(order: Sequence[Chunk], packed: Packed) -> int:
    """Team-knowledge sections among the first in packing order that the budget left out."""
    taken = {c.id for c in packed.chunks}
    return sum(1 for chunk in order[:LEFT_OUT_RANKS] if chunk.kind == "knowledge" and chunk.id not in taken)


def fingerprint_of(
    state: str, mode: str, profile: Profile, budget: int, query: str, chosen: Sequence[object]
) -> str:
    """What names a slice's inputs: the index state, the mode, the profile's weights, the budget,
    the query, and what else the slice was chosen by (``chosen``)."""
    key = json.dumps(
        [
            state,
            mode,
            profile.name,
            budget,
            query,
            profile.graph,
            profile.code,
            profile.tests,
            profile.docs,
            profile.views,
            *chosen,
        ]
    )
    return hashlib.sha256(key.encode()).hexdigest()[:16]
