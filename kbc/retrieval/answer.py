"""Answers with citations: an LLM writes from the retrieved sources, or the best passages
are quoted; either way every citation must point inside a retrieved source."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kbc.domain.errors import LLMError
from kbc.retrieval.results import Slice, SliceItem
from kbc.views.llm import Interpreter

CITATION = re.compile(r"\[([^\[\]\s:]+(?::[^\[\]\s:]+)*?):(\d+)(?:-(\d+))?\]")
EXCERPT_LINES = 6
SYSTEM = (
    "You answer an engineer's question about a code repository using only the sources given. "
    "Cite every claim with the source it comes from, written exactly as [path:start-end] with "
    "the path and a line range inside one of the sources' headers. Never cite anything else. "
    "If the sources do not answer the question, say so plainly. Answer in concise Markdown."
)


@dataclass(frozen=True, slots=True)
class Citation:
    path: str
    start_line: int
    end_line: int

    def __str__(self) -> str:
        return f"[{self.path}:{self.start_line}-{self.end_line}]"


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    question: str
    text: str  # Markdown, citations inline
    mode: str  # "llm" or "extractive"
    citations: tuple[Citation, ...]  # the valid ones, in order of first use
    dropped: tuple[str, ...]  # citations that pointed outside the retrieved sources
    sources: tuple[SliceItem, ...]
    retrieval: str
    model: str = ""
    note: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    rerank: str = ""  # with a reranker configured: whether the sources were reranked (the slice's)

    def as_data(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.text,
            "mode": self.mode,
            "model": self.model,
            "retrieval": self.retrieval,
            "note": self.note,
            **({"rerank": self.rerank} if self.rerank else {}),
            "citations": [
                {"path": c.path, "start_line": c.start_line, "end_line": c.end_line} for c in self.citations
            ],
            "dropped_citations": list(self.dropped),
            "sources": [
                {
                    "id": s.id,
                    "path": s.path,
                    "start_line": s.start_line,
                    "end_line": s.end_line,
                    "kind": s.kind,
                    "score": round(s.score, 8),
                }
                for s in self.sources
            ],
        }


def check_citations(text: str, sources: tuple[SliceItem, ...]) -> tuple[str, list[Citation], list[str]]:
    """The text without citations that point outside ``sources``; the valid and the dropped."""
    valid: list[Citation] = []
    dropped: list[str] = []

    def replace(match: re.Match[str]) -> str:
        path, start = match.group(1), int(match.group(2))
        end = int(match.group(3) or start)
        inside = any(s.path == path and s.start_line <= start <= end <= s.end_line for s in sources)
        if not inside:
            dropped.append(match.group(0))
            return ""
        citation = Citation(path, start, end)
        if citation not in valid:
            valid.append(citation)
        return match.group(0)

    cleaned = CITATION.sub(replace, text)
    cleaned = re.sub(r"[ \t]+([.,;:])", r"\1", cleaned)
    cleaned = re.sub(r"[ \t]{2,}", " ", cleaned)
    return cleaned.strip() + "\n", valid, dropped


def _excerpt(block_text: str, item: SliceItem) -> str:
    """The first lines of an item's passage in the slice text."""
    header = f"### {item.path}:{item.start_line}-{item.end_line}"
    at = block_text.find(header)
    if at < 0:
        return ""
    body = block_text[at:].split("\n```", 2)
    if len(body) < 2:
        return ""
    code = body[1].split("\n", 1)[1] if "\n" in body[1] else ""
    lines = [line for line in code.split("\n") if line.strip()][:EXCERPT_LINES]
    return "\n".join(lines)


def extractive(question: str, found: Slice, why: str) -> Answer:
    parts = [f"_No LLM answer ({why}): the best passages for the question, quoted from the sources._", ""]
    citations = []
    for item in found.items:
        citation = Citation(item.path, item.start_line, item.end_line)
        citations.append(citation)
        excerpt = _excerpt(found.text, item)
        parts.append(f"- {citation} ({item.kind})")
        if excerpt:
            parts.append("")
            parts.append("  ```")
            parts.extend(f"  {line}" for line in excerpt.split("\n"))
            parts.append("  ```")
    if not found.items:
        parts.append("Nothing in the knowledge base matched the question.")
    return Answer(
        question=question,
        text="\n".join(parts).rstrip() + "\n",
        mode="extractive",
        citations=tuple(citations),
        dropped=(),
        sources=found.items,
        retrieval=found.retrieval,
        note=why,
        rerank=found.rerank,
    )


def llm_answer(question: str, found: Slice, interpreter: Interpreter) -> Answer:
    """The LLM's answer from the slice; a failed call falls back to the extractive answer."""
    from kbc.analyzers.secrets import redact

    asked = f"Question: {question}\n\nSources:\n\n{found.text}"
    prompt = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": redact("prompt.md", asked, "markdown").text},
    ]
    try:
        reply = interpreter.complete(prompt, json_output=False)
    except LLMError as exc:
        return extractive(question, found, f"the LLM call failed: {exc.message}")
    text, valid, dropped = check_citations(reply.text, found.items)
    usage = {
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "cost": reply.cost,
    }
    return Answer(
        question=question,
        text=text,
        mode="llm",
        citations=tuple(valid),
        dropped=tuple(dropped),
        sources=found.items,
        retrieval=found.retrieval,
        model=interpreter.model,
        usage=usage,
        rerank=found.rerank,
    )
