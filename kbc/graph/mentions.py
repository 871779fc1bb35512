"""Whether the code still has what a document's mentions name, judged over the linked facts
with the one name resolution (:meth:`kbc.graph.symbols.SymbolTable.exists`)."""

from __future__ import annotations

from collections.abc import Iterable

from kbc.analyzers.mentions import BUILTINS, DOTTED, FILE_SUFFIXES, Mention
from kbc.graph.symbols import SymbolTable


class MentionChecker:
    """The mentions a document makes that name code the facts no longer hold.

    (a) A dotted name whose first component is a top-level package or module of
    the repository (a trailing ``()`` allowed) must name something the code has
    (:meth:`SymbolTable.exists`). (b) A call ``name()`` or ``Name.method()``
    (``Name`` capitalised, not an outside import) must end in a name some symbol
    has; builtins and names imported from outside the repository pass.
    """

    def __init__(self, table: SymbolTable) -> None:
        self.table = table
        self.tops = frozenset(p.split(".")[0] for p in table.packages)
        self.names = frozenset(s.name for s in table.symbols.values())
        self.external_names = frozenset(n for names in table.external.values() for n in names)

    def knows_call(self, name: str) -> bool:
        """Whether a called ``name`` (a last component) is a symbol, a builtin or an outside import."""
        return name in self.names or name in BUILTINS or name in self.external_names

    def missing(self, mentions: Iterable[Mention]) -> tuple[str, ...]:
        """The mentions (as written) that name code the facts no longer hold, sorted and unique."""
        if not self.table.symbols:
            return ()  # no Python facts: nothing to judge the mentions against
        missing: set[str] = set()
        for mention in mentions:
            text = mention.text
            call = text.endswith("()")
            name = text[:-2] if call else text
            if not DOTTED.fullmatch(name):
                continue
            parts = name.split(".")
            if len(parts) > 1 and parts[0] in self.tops:
                if (call or parts[-1].lower() not in FILE_SUFFIXES) and not self.table.exists(name):
                    missing.add(text)
            elif call and len(parts) <= 2:
                if len(parts) == 2 and (
                    not parts[0][:1].isupper() or parts[0] in self.external_names or parts[0] in BUILTINS
                ):
                    continue
                if not self.knows_call(parts[-1]):
                    missing.add(text)
        return tuple(sorted(missing))
