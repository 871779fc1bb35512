"""The third ranked list: the chunks of what the task names.

:mod:`kbc.retrieval.query` reads the mentions, :mod:`kbc.retrieval.resolve`
matches them against the facts, and here each match becomes the chunks that
hold it: a definition's first unit (or the unit holding a frame's line), a
file's best-ranked units. A mention the facts do not hold (an option, a
constant, a message no guard raises, a quoted line of code) is looked up in
the lexical index: the chunks holding all of its words, and for a name, an
option or a line of code the literal text itself.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kbc.domain.models import FileFacts
from kbc.index.lexical import LexicalIndex
from kbc.index.tokens import tokens
from kbc.retrieval.query import CODE, FRAME, LINE, MESSAGE, NAME, OPTION, PATH, SNIPPET, Mention, read_query
from kbc.retrieval.resolve import FactsLookup, Target, describe

PER_FILE = 2  # units of a file named by its path alone
PER_LOOKUP = 3  # units kept of a lexical look-up
OPTION_LOOKUP = 200  # chunks holding an option's words searched for where it is declared
MAX_LOOKUPS = 12  # mentions looked up lexically per query
MAX_MATCHED = 60
SNIPPETS = True  # names read from the task's code blocks


@dataclass(frozen=True, slots=True)
class Located:
    start: int
    end: int
    id: str
    symbols: tuple[str, ...]
    unit: str


@dataclass(frozen=True, slots=True)
class Matched:
    ids: list[str]  # chunk ids, strongest mention first
    described: list[dict[str, Any]]  # what each mention matched, for the JSON output
    # files the task names on purpose, by their path
    paths: frozenset[str] = frozenset()
    kinds: dict[str, int] = field(default_factory=dict)  # chunk id -> its strongest mention's kind
    # the task's frames, paths and code names that matched nothing of the repository (what a
    # task about another repository names)
    missed: int = 0


class Matcher:
    def __init__(
        self, facts: Sequence[FileFacts], lexical: LexicalIndex, scripts: Sequence[str] = ()
    ) -> None:
        self.lexical = lexical
        self.by_path: dict[str, list[Located]] = defaultdict(list)
        for cid, path, start, end, symbols, unit in lexical.locations():
            self.by_path[path].append(Located(start, end, cid, symbols, unit))
        self.starts = {path: [c.start for c in found] for path, found in self.by_path.items()}
        self.lookup = FactsLookup(facts, self.by_path, scripts)

    def _at(self, path: str, line: int) -> str:
        found = self.by_path.get(path, [])
        index = bisect.bisect_right(self.starts.get(path, []), line) - 1
        if 0 <= index < len(found) and found[index].start <= line <= found[index].end:
            return found[index].id
        return ""

    def _chunks(self, target: Target, ranked: dict[str, int]) -> list[str]:
        if target.qname:
            _, symbol = self.lookup.symbols[target.qname]
            if target.line and symbol.start_line <= target.line <= symbol.end_line:
                at = self._at(target.path, target.line)
                if at:
                    return [at]
            holding = [c.id for c in self.by_path.get(target.path, []) if target.qname in c.symbols]
            return holding[:1] or [self._at(target.path, symbol.start_line)]
        if target.line:
            at = self._at(target.path, target.line)
            if at:
                return [at]
        units = self.by_path.get(target.path, [])
        best = sorted((c for c in units if c.id in ranked), key=lambda c: ranked[c.id])[:PER_FILE]
        return [c.id for c in best] or [c.id for c in units[:1]]

    def prelude(self, path: str) -> str:
        """The unit holding a parsed module's docstring, imports and constants ("" if none)."""
        units = self.by_path.get(path, [])
        return units[0].id if units and units[0].unit == "prelude" else ""

    def definition(self, qname: str) -> str:
        """The first unit of the definition ``qname`` ("" when it is not indexed)."""
        if qname not in self.lookup.symbols:
            return ""
        found = self._chunks(self.lookup.target(qname), {})
        return found[0] if found else ""

    def _literal(self, mention: Mention) -> list[str]:
        words = list(dict.fromkeys(tokens(mention.text if mention.kind != NAME else mention.name)))
        if mention.kind in (NAME, CODE):
            words = words[:1]  # the identifier whole
        if not words:
            return []
        if mention.kind == OPTION:
            return self._option(mention.text, words)
        ids = self.lexical.search_all(words[:12], 40)
        if mention.kind == MESSAGE:
            return ids[:PER_LOOKUP]
        literal = mention.text if mention.kind in (OPTION, LINE) else (mention.name or mention.text)
        texts = self.lexical.chunks(ids)
        return [cid for cid in ids if cid in texts and literal in texts[cid].text][:PER_LOOKUP]

    def _option(self, option: str, words: list[str]) -> list[str]:
        """Where an option or setting is declared or read: chunks that hold it as written
        (``--name``) or its bare name as a string (``"name"``, as argparse, click and option
        tables declare it), the repository's own code before its tests and docs."""
        bare = option.lstrip("-")
        literals = (f"--{bare}", f'"{bare}"', f"'{bare}'")
        ids = self.lexical.search_all(words[:12], OPTION_LOOKUP)
        texts = self.lexical.chunks(ids)
        held = [cid for cid in ids if cid in texts and any(x in texts[cid].text for x in literals)]
        # a stable sort: within a role, the best BM25 first
        return sorted(held, key=lambda cid: _DECLARING.get(texts[cid].role, 2))[:PER_LOOKUP]

    def match(self, query: str, ranked: Sequence[str]) -> Matched:
        """The chunks of the query's mentions, strongest mention first; ``ranked`` (chunk ids,
        best first) orders a file's units when only the file is named."""
        position = {cid: i for i, cid in enumerate(ranked)}
        mentions = [m for m in read_query(query) if SNIPPETS or m.kind != SNIPPET]
        matches, unmatched = self.lookup.match(mentions)
        by_mention = {id(m.mention): m for m in matches}
        lookups = [
            m
            for m in unmatched
            if m.kind in (OPTION, MESSAGE, LINE) or (m.kind in (NAME, CODE) and _wordlike(m.name or m.text))
        ][:MAX_LOOKUPS]
        looked_up = {id(m) for m in lookups}
        ids: dict[str, None] = {}
        described = []
        named: set[str] = set()
        kinds: dict[str, int] = {}
        missed = 0
        for mention in mentions:  # in the order read: strongest kind first
            match = by_mention.get(id(mention))
            if match is not None:
                found = [cid for t in match.targets for cid in self._chunks(t, position) if cid]
                described.append(describe(match))
                if mention.kind == PATH:  # frames and code names name files in passing
                    named.update(t.path for t in match.targets)
            elif id(mention) in looked_up:
                found = self._literal(mention)
                if found:
                    described.append(_found_in_text(mention, found, self.lexical))
                else:
                    missed += mention.kind in _NAMING
                    continue
            else:
                missed += mention.kind in _NAMING
                continue
            for cid in found:
                ids.setdefault(cid, None)
                kinds[cid] = min(kinds.get(cid, mention.kind), mention.kind)
        kept = list(ids)[:MAX_MATCHED]
        return Matched(kept, described, frozenset(named), {cid: kinds[cid] for cid in kept}, missed)


_NAMING = frozenset({FRAME, PATH, CODE, NAME})  # mentions that name a file or a definition

# Where an option is declared or handled: the repository's code first, its tests last.
_DECLARING = {"source": 0, "test": 3}


def _wordlike(name: str) -> bool:
    """An identifier worth finding as text: one word with an underscore or an inner capital
    (``DEFAULT_LOG_FORMAT``, ``pytest_runtest_makereport``, ``PairGrid``)."""
    bare = name.strip("_")
    return bare.isidentifier() and ("_" in bare or any(c.isupper() for c in bare[1:]))


def _found_in_text(mention: Mention, ids: list[str], lexical: LexicalIndex) -> dict[str, Any]:
    chunks = lexical.chunks(ids)
    return {
        "mention": mention.text,
        "kind": mention.label,
        "how": "text",
        "targets": [
            f"{chunks[c].path}:{chunks[c].start_line}-{chunks[c].end_line}" for c in ids if c in chunks
        ],
    }
