"""Match what a task names against the facts: files, definitions and the messages code raises.

- a path matches the indexed file that shares the longest run of trailing path
  components with it (``site-packages/requests/sessions.py`` is
  ``requests/sessions.py``), when only a few files share its name;
- a code name matches a definition by its qualified name, through re-exports
  (``requests.Session``), or by its longest dotted tail (``Session.send``,
  ``resolve_redirects``) when at most ``MAX_TARGETS`` definitions share it;
- a traceback frame matches the definition of that name in the frame's file,
  or the line's definition, or else the name alone;
- a quoted message matches the raise or assert whose literal text it contains;
- ``$ prog sub`` in a shell session, ``prog`` a console script of the repository,
  matches the code of the command named ``sub`` (click, typer, argparse).

What does not match here (an option, a constant, a message no guard raises, a
quoted line of code) is left to the lexical index, which holds every word of
every file.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from kbc.domain.models import FileFacts, Symbol
from kbc.graph.symbols import SymbolTable
from kbc.retrieval.query import CODE, COMMAND, FRAME, MESSAGE, NAME, PATH, SNIPPET, Mention

MAX_TARGETS = 8  # a name shared by more definitions than this says nothing about which
MAX_SAME_NAME_FILES = 3  # likewise for a bare file name (utils.py)
COMMAND_KINDS = frozenset({"click", "typer", "argparse"})
_PLACEHOLDER = re.compile(r"%\(\w+\)[-#0 +]*\d*(?:\.\d+)?[a-zA-Z]|%[-#0 +]*\d*(?:\.\d+)?[a-zA-Z]|\{[^{}]*\}")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Target:
    path: str
    qname: str = ""  # the definition; "" for a file (or a line of it)
    line: int = 0  # a line to find within it (a frame's line, a guard's line)


@dataclass(frozen=True, slots=True)
class Match:
    mention: Mention
    targets: tuple[Target, ...]
    how: str  # qname | reexport | tail | path | frame | message


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text.lower()).strip()


class FactsLookup:
    """Paths, definitions and guard messages of one repository, indexed for matching."""

    def __init__(self, facts: Sequence[FileFacts], paths: Iterable[str], scripts: Iterable[str] = ()) -> None:
        self.facts = facts
        self.scripts = set(scripts)  # console scripts the packaging metadata declares
        self.commands: dict[str, list[Target]] = defaultdict(list)  # command name -> its code
        self.symbols: dict[str, tuple[str, Symbol]] = {}
        self.by_file: dict[str, list[Symbol]] = {}
        self.modules: dict[str, str] = {}
        tails: dict[str, set[str]] = defaultdict(set)
        for file in facts:
            self.modules.setdefault(file.module, file.path)
            self.by_file[file.path] = list(file.symbols)
            for symbol in file.symbols:
                self.symbols.setdefault(symbol.qname, (file.path, symbol))
                parts = symbol.qname.split(".")
                for k in range(1, len(parts)):
                    tails[".".join(parts[k:])].add(symbol.qname)
        self.tails = {tail: sorted(qnames) for tail, qnames in tails.items()}
        self.by_basename: dict[str, list[str]] = defaultdict(list)
        for path in sorted(set(paths)):
            self.by_basename[PurePosixPath(path).name].append(path)
        self.messages: list[tuple[tuple[str, ...], Target]] = []
        for file in facts:
            for entry in file.entry_points:
                if entry.kind in COMMAND_KINDS and entry.target in self.symbols:
                    self.commands[entry.name].append(Target(self.symbols[entry.target][0], entry.target))
            for guard in file.guards:
                fragments = tuple(
                    f for f in (_normal(p) for p in _PLACEHOLDER.split(guard.message)) if len(f) >= 4
                )
                if sum(len(f) for f in fragments) >= 10:
                    self.messages.append((fragments, Target(file.path, guard.symbol, guard.line)))
        self._table: SymbolTable | None = None

    @property
    def table(self) -> SymbolTable:
        if self._table is None:
            self._table = SymbolTable(self.facts)
        return self._table

    # -- paths -----------------------------------------------------------------

    def path(self, written: str) -> str:
        """The indexed file ``written`` names, or ""."""
        parts = [p for p in PurePosixPath(written.replace("\\", "/")).parts if p not in ("/", ".", "~")]
        if not parts:
            return ""
        candidates = self.by_basename.get(parts[-1], [])
        best, best_shared = "", 0
        tied = 0
        for candidate in candidates:
            mine = candidate.split("/")
            shared = 0
            while shared < min(len(mine), len(parts)) and mine[-1 - shared] == parts[-1 - shared]:
                shared += 1
            if shared > best_shared:
                best, best_shared, tied = candidate, shared, 1
            elif shared == best_shared:
                tied += 1
        if not best or tied > 1:
            return ""
        if best_shared == 1 and len(candidates) > MAX_SAME_NAME_FILES:
            return ""
        return best

    # -- names -----------------------------------------------------------------

    def name(self, written: str) -> tuple[list[str], str]:
        """Qualified names ``written`` refers to, and how they were found."""
        name = written.strip().rstrip("()").strip(".")
        if not name:
            return [], ""
        if name in self.symbols:
            return [name], "qname"
        if "." in name:
            found = self.table.resolve(name)
            if found is not None and found in self.symbols:
                return [found], "reexport"
            if found is not None and found in self.modules:
                return [], "module"
        parts = name.split(".")
        for k in range(len(parts)):
            tail = ".".join(parts[k:])
            qnames = self.tails.get(tail)
            if qnames:
                return (qnames, "tail") if len(qnames) <= MAX_TARGETS else ([], "ambiguous")
        return [], ""

    def module_file(self, written: str) -> str:
        name = written.strip()
        if name in self.modules:
            return self.modules[name]
        found = self.table.resolve(name) if "." in name else None
        return self.modules.get(found or "", "")

    def target(self, qname: str, line: int = 0) -> Target:
        path, _ = self.symbols[qname]
        return Target(path, qname, line)

    # -- mentions ----------------------------------------------------------------

    def match(self, mentions: Sequence[Mention]) -> tuple[list[Match], list[Mention]]:
        """What each mention matches, and the mentions nothing in the facts matched."""
        matched: list[Match] = []
        unmatched: list[Mention] = []
        for mention in mentions:
            found = self._match(mention)
            if found is not None and found.targets:
                matched.append(found)
            else:
                unmatched.append(mention)
        return matched, unmatched

    def _match(self, mention: Mention) -> Match | None:
        if mention.kind == FRAME:
            return self._frame(mention)
        if mention.kind == PATH:
            path = self.path(mention.path)
            return Match(mention, (Target(path, "", mention.line),), "path") if path else None
        if mention.kind in (CODE, NAME, SNIPPET):
            qnames, how = self.name(mention.name or mention.text)
            if qnames:
                return Match(mention, tuple(self.target(q) for q in qnames), how)
            if mention.kind == CODE:
                module = self.module_file(mention.name or mention.text)
                if module:
                    return Match(mention, (Target(module),), "module")
            return None
        if mention.kind == COMMAND:
            # `$ prog sub`: the program's own entry says nothing; its subcommand names code
            found = self.commands.get(mention.name, []) if mention.path in self.scripts else []
            return Match(mention, tuple(found), "command") if 0 < len(found) <= MAX_TARGETS else None
        if mention.kind == MESSAGE:
            text = _normal(mention.text)
            targets = tuple(
                sorted(
                    {
                        t
                        for fragments, t in self.messages
                        if all(f in text for f in fragments) or text in " ".join(fragments)
                    },
                    key=lambda t: (t.path, t.line),
                )
            )
            return Match(mention, targets, "message") if 0 < len(targets) <= MAX_TARGETS else None
        return None

    def _frame(self, mention: Mention) -> Match | None:
        path = self.path(mention.path)
        if path:
            named = [s for s in self.by_file.get(path, ()) if mention.name and s.name == mention.name]
            if mention.line:
                holding = [s for s in named if s.start_line <= mention.line <= s.end_line]
                named = holding or named
            if named:
                return Match(mention, tuple(Target(path, s.qname, mention.line) for s in named), "frame")
            return Match(mention, (Target(path, "", mention.line),), "frame")
        if mention.name:
            # The file is not indexed as written (several share its name, or it has moved to
            # another folder): the name is looked for in the files of that name. A frame of a
            # file the repository does not hold (the standard library's, another package's)
            # names none of its code.
            alike = set(self.by_basename.get(PurePosixPath(mention.path.replace("\\", "/")).name, ()))
            qnames, how = self.name(mention.name)
            qnames = [q for q in qnames if self.symbols[q][0] in alike]
            if qnames:
                return Match(mention, tuple(self.target(q) for q in qnames), how)
        return None


def describe(match: Match) -> dict[str, object]:
    """A match as the JSON output shows it: what was read, how it matched, and where."""
    return {
        "mention": match.mention.text,
        "kind": match.mention.label,
        "how": match.how,
        "targets": [t.qname or (f"{t.path}:{t.line}" if t.line else t.path) for t in match.targets],
    }
