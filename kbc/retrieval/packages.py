"""The packages a task names: a word of the task that is the name of a folder of the
repository's code points at the files under it.

A question that says "views" of a repository with a ``kbc/views/`` package is asked of that
package, even where the word is too common in the repository's prose and tests to weigh
anything in BM25: its files, ranked by their lexical evidence, are one more list of the
fusion (:func:`kbc.retrieval.rank.fuse`, at ``PACKAGE_WEIGHT``, off by default). A folder is
a package here when it holds source code (tests, documents and examples name no package) and
not most of it (the folder every file is under, ``src/`` or the project's own name, says
nothing).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from kbc.index.tokens import fold, tokens, words

MOST = 0.5  # of the repository's source files: a folder holding more names no part of it
MIN_NAME = 3  # characters of a folder's name (shorter ones are abbreviations a task rarely writes)


def _stem(word: str) -> str:
    """A word without a plural's ``s`` (``views`` and ``view`` name the same package)."""
    return word[:-1] if len(word) > MIN_NAME and word.endswith("s") and not word.endswith("ss") else word


class Packages:
    """The folders of a repository's source files, by the words of their names."""

    def __init__(self, source_paths: Iterable[str]) -> None:
        held: dict[str, int] = defaultdict(int)
        total = 0
        for path in sorted(set(source_paths)):
            total += 1
            parts = path.split("/")[:-1]
            for depth in range(1, len(parts) + 1):
                held["/".join(parts[:depth]) + "/"] += 1
        self.by_name: dict[tuple[str, ...], list[str]] = defaultdict(list)
        for folder, count in sorted(held.items()):
            name = folder.rstrip("/").rsplit("/", 1)[-1]
            if count > MOST * total or len(name) < MIN_NAME or name.startswith((".", "_")):
                continue
            self.by_name[_name_words(name)].append(folder)

    def named(self, query: str) -> tuple[str, ...]:
        """The folders (``a/b/``, sorted) whose name the query writes: every word of the name
        among the query's words."""
        said = {_stem(t) for t in tokens(query)}
        found = [
            folder for key, folders in self.by_name.items() if key and set(key) <= said for folder in folders
        ]
        return tuple(sorted(found))


def _name_words(name: str) -> tuple[str, ...]:
    """The words a folder's name is written with (``http_client``: ``http``, ``client``)."""
    pieces = words(name) if name.isascii() else [fold(name)]
    return tuple(sorted({_stem(p) for p in pieces if p}))
