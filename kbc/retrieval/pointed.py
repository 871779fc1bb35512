"""Where the repository's documents point: the files of the repository that the best lexical
hits among its documents name.

A document found for a task (a README, an architecture note, a how-to) often names the file
that does what the task asks about (`` `pack.py` packs the budget``, ``see
src/app/session.py``): the files the documents among the ten best lexical hits name, in the
order they name them (each document's lines sharing the most words with the task first), can
be one more ranked list of files for the fusion (:func:`kbc.retrieval.rank.fuse`, at
``POINTED_WEIGHT``, off: it lost held-out how-to questions). A name is a path of the
repository, or a file name only one of its files bears; a dotted module name
(``kbc.retrieval.pack``) is read as its path.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

from kbc.domain.models import Chunk
from kbc.index.tokens import tokens
from kbc.retrieval.packages import Packages

SEEDS = 10  # the best lexical hits whose documents are read
PER_DOCUMENT = 8  # files named by one document chunk, at most
_NAMED = re.compile(r"[A-Za-z_][\w.-]*(?:/[\w.-]+)*\.[A-Za-z]\w*|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*){2,}")


class Files:
    """The repository's files, by path and by the name only one of them bears."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths = frozenset(paths)
        named: dict[str, list[str]] = defaultdict(list)
        for path in sorted(self.paths):
            named[path.rsplit("/", 1)[-1]].append(path)
        self.unique = {name: found[0] for name, found in named.items() if len(found) == 1}
        self.modules: dict[str, str] = {}
        for path in sorted(self.paths):
            if path.endswith(".py"):
                module = path[: -len(".py")].removesuffix("/__init__").replace("/", ".")
                self.modules.setdefault(module, path)
                if module.startswith("src."):
                    self.modules.setdefault(module[len("src.") :], path)

    def resolve(self, name: str) -> str | None:
        """The path ``name`` names, if any (a path, a unique file name, a dotted module)."""
        name = name.strip("./")
        if name in self.paths:
            return name
        if "/" not in name and name in self.unique:
            return self.unique[name]
        return self.modules.get(name) if "." in name else None  # a bare word names no module


def named_files(text: str, files: Files, terms: frozenset[str], limit: int = PER_DOCUMENT) -> list[str]:
    """The first ``limit`` files ``text`` names, on the lines sharing the most of ``terms``
    first, then in the order named."""
    lines = text.splitlines()
    order = sorted(range(len(lines)), key=lambda i: -len(terms.intersection(tokens(lines[i]))))
    found: dict[str, None] = {}
    for i in order:
        for match in _NAMED.finditer(lines[i]):
            path = files.resolve(match.group(0))
            if path is not None:
                found.setdefault(path, None)
                if len(found) >= limit:
                    return list(found)
    return list(found)


def pointed(
    lexical: Sequence[tuple[str, float]], chunks: Mapping[str, Chunk], files: Files, query: str
) -> list[str]:
    """The files the documents among the ``SEEDS`` best lexical hits name, best document first
    (a document names no file of its own)."""
    terms = frozenset(tokens(query))
    out: dict[str, None] = {}
    for cid, _ in lexical[:SEEDS]:
        chunk = chunks.get(cid)
        if chunk is None or chunk.kind != "doc":
            continue
        for path in named_files(chunk.text, files, terms):
            if path != chunk.path:
                out.setdefault(path, None)
    return list(out)


class Layout:
    """What a task's words say of the repository's layout, read on first use: the folders of
    source code it names (:mod:`kbc.retrieval.packages`) and the files its documents name."""

    def __init__(self, source_paths: Callable[[], Iterable[str]], paths: Callable[[], Iterable[str]]) -> None:
        self._source_paths = source_paths
        self._paths = paths
        self._packages: Packages | None = None
        self._files: Files | None = None

    def folders(self, query: str) -> tuple[str, ...]:
        if self._packages is None:
            self._packages = Packages(self._source_paths())
        return self._packages.named(query)

    def pointed(
        self, lexical: Sequence[tuple[str, float]], chunks: Mapping[str, Chunk], query: str
    ) -> list[str]:
        if self._files is None:
            self._files = Files(self._paths())
        return pointed(lexical, chunks, self._files, query)
