"""The baseline retrieval is measured against: BM25 over whole files.

Every file is one document in an in-memory SQLite FTS5 table (its path words
and its text, both through kbc's code tokenizer), ranked by BM25 for the
query's tokens. A budget is filled with whole files in rank order, each as a
fenced block under its path, skipping those that no longer fit: what a tool
without chunking, fusion or a graph would hand an agent.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from kbc.index.chunks import split_lines
from kbc.index.lexical import match_expression
from kbc.index.tokencount import TokenCounter
from kbc.index.tokens import path_tokens, tokens

LIMIT = 200  # files ranked per query
WEIGHTS = (2.0, 1.0)  # bm25() column weights: path, body


class WholeFileBM25:
    """BM25 over the whole text of ``paths`` (relative to ``root``), indexed once."""

    def __init__(self, root: Path, paths: Iterable[str]) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute(
            "CREATE VIRTUAL TABLE f USING fts5(path, body, tokenize = \"unicode61 tokenchars '_'\")"
        )
        self.texts: dict[str, str] = {}
        self.paths: list[str] = []
        for path in sorted(set(paths)):
            try:
                text = (root / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            self.texts[path] = text
            self.paths.append(path)
            self.db.execute(
                "INSERT INTO f (rowid, path, body) VALUES (?, ?, ?)",
                (len(self.paths), " ".join(path_tokens(path)), " ".join(tokens(text))),
            )
        self._costs: dict[str, int] = {}

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> WholeFileBM25:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def rank(self, query: str, limit: int = LIMIT) -> list[str]:
        """Paths best first (ties by path order)."""
        expression = match_expression(query)
        if not expression:
            return []
        weights = ", ".join(str(w) for w in WEIGHTS)
        rows = self.db.execute(
            f"SELECT rowid FROM f WHERE f MATCH ? ORDER BY bm25(f, {weights}), rowid LIMIT ?",
            (expression, limit),
        )
        return [self.paths[rowid - 1] for (rowid,) in rows]

    def fill(self, ranked: Iterable[str], budget: int, counter: TokenCounter) -> list[str]:
        """The ranked files that fit whole in ``budget`` tokens, taken in rank order."""
        used = 0
        taken: list[str] = []
        for path in ranked:
            cost = self._costs.get(path)
            if cost is None:
                block = f"### {path}\n```\n{''.join(split_lines(self.texts[path]))}```\n"
                cost = self._costs[path] = counter.count(block)
            if used + cost <= budget:
                used += cost
                taken.append(path)
        return taken
