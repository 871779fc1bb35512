"""The reranker seam: the first candidates of a ranking re-ordered before packing.

Off by default. ``retrieval.rerank_model`` names either a chat model behind litellm, which
reads the task and the candidates (each cut to ``CANDIDATE_TOKENS``) and answers their order
(listwise), or ``plugin:NAME``, a reranker an installed package declares under the
``kbc.rerankers`` entry point (a local cross-encoder, say). An order is cached by the model,
the task and the candidates' texts, so the same request gives the same slice; a failure or a
timeout leaves the fused order, and the slice says which it got.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from kbc.domain.errors import KbcError
from kbc.domain.models import Chunk
from kbc.retrieval.results import RERANKED, Ranking

if TYPE_CHECKING:
    from kbc.store.rerank_cache import RerankCache
    from kbc.views.llm import Interpreter

CANDIDATE_TOKENS = 150  # of each candidate the model reads (its head: signature, docstring, start)
CHARS_PER_TOKEN = 4  # the cut is made in characters, about this many a token of code
TASK_CHARS = 4000  # of the task the model reads
ENTRY_POINT_GROUP = "kbc.rerankers"
PLUGIN_PREFIX = "plugin:"


@dataclass(frozen=True, slots=True)
class Candidate:
    id: str
    path: str
    start_line: int
    end_line: int
    text: str  # cut to CANDIDATE_TOKENS


class Reranker(Protocol):
    """Orders candidates for a task: their indexes, best first. Indexes it leaves out follow in
    the fused order; an exception leaves the fused order whole."""

    @property
    def name(self) -> str: ...

    def order(self, task: str, candidates: Sequence[Candidate]) -> list[int]: ...


@dataclass(frozen=True, slots=True)
class Reranked:
    ranked: list[tuple[str, float]]
    note: str  # "reranked by M (N candidates)" or "not reranked (why): fused order"


PROMPT = """You rank code for a software task. Below are numbered candidates, each a part of a
file of the repository (path and lines, then its first lines). Order them by how likely the
task needs to read or change them, most likely first.
Answer with JSON only: {{"order": [numbers, best first]}}. Leave out none you can judge.

Task:
{task}

Candidates:
{candidates}"""


class LLMReranker:
    """Listwise reranking by a chat model through an :class:`Interpreter` (its timeout and
    retries bound the call)."""

    def __init__(self, interpreter: Interpreter) -> None:
        self._interpreter = interpreter

    @property
    def name(self) -> str:
        return self._interpreter.model

    def order(self, task: str, candidates: Sequence[Candidate]) -> list[int]:
        shown = "\n\n".join(
            f"[{n}] {c.path}:{c.start_line}-{c.end_line}\n{c.text}" for n, c in enumerate(candidates, 1)
        )
        prompt = PROMPT.format(task=task[:TASK_CHARS], candidates=shown)
        answer = self._interpreter.complete([{"role": "user", "content": prompt}], json_output=True)
        return [n - 1 for n in parse_order(answer.text, len(candidates))]


def parse_order(text: str, count: int) -> list[int]:
    """The numbers (1..count) of a model's answer, first mention kept: ``{"order": [...]}``,
    a bare list, or numbers in prose. Raises ValueError when it names none."""
    found: list[object] = []
    try:
        data = json.loads(text)
        found = data.get("order", []) if isinstance(data, dict) else data if isinstance(data, list) else []
    except json.JSONDecodeError:
        found = [int(n) for n in re.findall(r"\d+", text)]
    order: list[int] = []
    for value in found if isinstance(found, list) else []:
        if (
            isinstance(value, int)
            and not isinstance(value, bool)
            and 1 <= value <= count
            and value not in order
        ):
            order.append(value)
    if not order:
        raise ValueError(f"the answer named no candidate: {text[:120]!r}")
    return order


def cut(text: str, tokens: int = CANDIDATE_TOKENS) -> str:
    limit = tokens * CHARS_PER_TOKEN
    return text if len(text) <= limit else text[:limit].rstrip() + "\n..."


def cache_key(model: str, task: str, candidates: Sequence[Candidate]) -> str:
    digest = hashlib.sha256()
    for part in (model, task, *(f"{c.id}\0{c.text}" for c in candidates)):
        digest.update(part.encode("utf-8", "replace"))
        digest.update(b"\x01")
    return digest.hexdigest()


def rerank(
    task: str,
    ranked: list[tuple[str, float]],
    chunks: Mapping[str, Chunk],
    reranker: Reranker,
    count: int,
    cache: RerankCache | None = None,
) -> Reranked:
    """``ranked`` with its first ``count`` candidates in the reranker's order. The scores stay
    where they were (the first place keeps the first score), so what follows sees a ranking
    ordered as before; the rest keep their places."""
    head = ranked[:count]
    if len(head) < 2:
        return Reranked(ranked, "not reranked (fewer than two candidates): fused order")
    candidates = [_candidate(chunks[cid]) for cid, _ in head]
    key = cache_key(reranker.name, task, candidates)
    order = cache.get(key) if cache is not None else None
    if order is None:
        try:
            order = reranker.order(task, candidates)
        except Exception as exc:
            reason = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
            return Reranked(ranked, f"not reranked ({reason}): fused order")
        order = [i for i in dict.fromkeys(order) if 0 <= i < len(head)]
        if cache is not None:
            cache.put(key, order)
    chosen = order + [i for i in range(len(head)) if i not in order]
    scores = [score for _, score in head]
    reordered = [(head[i][0], scores[place]) for place, i in enumerate(chosen)]
    return Reranked(reordered + ranked[count:], f"{RERANKED}{reranker.name} ({len(head)} candidates)")


def _candidate(chunk: Chunk) -> Candidate:
    text = f"{chunk.heading}\n{chunk.text}" if chunk.heading and chunk.kind != "code" else chunk.text
    return Candidate(chunk.id, chunk.path, chunk.start_line, chunk.end_line, cut(text))


@dataclass(slots=True)
class Reranking:
    """A reranker as a retriever uses it: how many candidates it re-orders, where its orders
    are kept."""

    reranker: Reranker
    candidates: int = 20
    cache: RerankCache | None = None

    def apply(self, task: str, found: Ranking) -> Ranking:
        done = rerank(task, found.ranked, found.chunks, self.reranker, self.candidates, self.cache)
        return replace(found, ranked=done.ranked, rerank=done.note)

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()


def plugin(name: str) -> Reranker:
    """The reranker an installed package declares as ``name`` under ``kbc.rerankers``: a
    callable that returns a :class:`Reranker`."""
    from importlib.metadata import entry_points

    found = [e for e in entry_points(group=ENTRY_POINT_GROUP) if e.name == name]
    if not found:
        known = sorted({e.name for e in entry_points(group=ENTRY_POINT_GROUP)})
        raise KbcError(
            f"no reranker named {name!r} is installed",
            hint=f"install the package that provides it; installed: {', '.join(known) or 'none'}",
        )
    try:
        made = found[0].load()()
    except Exception as exc:
        raise KbcError(
            f"the reranker {name!r} failed to load: {exc}",
            hint=f"check the package that provides {found[0].value}",
        ) from exc
    if not callable(getattr(made, "order", None)):
        raise KbcError(
            f"the reranker {name!r} has no order(task, candidates) method",
            hint=f"check the package that provides {found[0].value}",
        )
    return PluginReranker(f"{PLUGIN_PREFIX}{name}", made)


class PluginReranker:
    """An installed reranker, named as configured (its order cached under that name)."""

    def __init__(self, name: str, made: object) -> None:
        self._name = name
        self._made = made

    @property
    def name(self) -> str:
        return self._name

    def order(self, task: str, candidates: Sequence[Candidate]) -> list[int]:
        found = self._made.order(task, candidates)  # type: ignore[attr-defined]
        return [int(i) for i in found]
