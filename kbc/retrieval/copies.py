"""Copies known for what they are, and the definition the package reaches preferred to them.

A repository may keep copies of its own code: an older tree beside the current one
(``pkg/v1/main.py`` beside ``pkg/main.py``), type stubs beside the sources they describe
(``mod.pyi`` beside ``mod.py``, ``index.d.ts`` beside ``index.ts``, a package's ``__init__.pyi``
over its private modules), or a class copied into another module. A copy shares the words of
the real definition, so a task about one matches both, and the copy may win. Here, from the
facts:

- a file under a legacy folder (``v1``, ``legacy``, ``old``) whose path without that folder is a
  file of the repository: its definitions are copies of the definitions of the same name there,
  and when that file defines most of its top-level names, it is a copy of that file as a whole;
- of a folder's version trees (``src/v3/`` beside ``src/v4/``), a top-level definition of an
  older one is a copy of the definition of that name the newest holds once;
- a stub is a copy of the module it describes; a definition of a package's stub that the stub's
  own module does not define is a copy of the one definition of that name in the package's
  source modules;
- of two top-level definitions with the same name, kind and nearly the same text (word
  shingles, Jaccard at least ``SAME_TEXT``) in two source files, the copy is the one whose
  module fewer modules import, or (as many) whose module does not export it (``__all__``).

In a ranking, a copy's place goes to the definition it copies (or, for a file, to that file's
best-ranked unit), unless that ranks before it already, and the copy goes after everything
else: a slice holds it only when the budget has room to spare.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from kbc.analyzers.roles import role_of
from kbc.domain.models import Chunk, FileFacts
from kbc.retrieval.matched import Located

_LEGACY = re.compile(r"^_?(v\d+|legacy|old)$", re.IGNORECASE)
_VERSION = re.compile(r"^_?v(\d+)$", re.IGNORECASE)
_CODE = (
    ".py",
    ".pyi",
    ".ts",
    ".tsx",
    ".js",
    ".mjs",
    ".cjs",
    ".go",
    ".rs",
    ".java",
    ".c",
    ".h",
    ".cc",
    ".cpp",
)
SHARED_FILES = 3  # files of a legacy folder the code beside it must repeat (or half of them)
SHARED_NAMES = 0.5  # of a file's top-level names its current counterpart must define too
_STUB_SUFFIXES = ((".pyi", (".py",)), (".d.ts", (".ts", ".tsx", ".js")), (".d.mts", (".mts",)))
PREFER = True  # False: copies keep their places (for comparison)
_PACKAGE_STUBS = ("__init__.pyi", "index.d.ts")  # a package's stub: its names defined in its modules
SAME_TEXT = 0.8  # Jaccard of two definitions' word shingles past which one is a copy of the other
MIN_LINES = 5  # shorter definitions alike by chance are no copies
MAX_SAME_NAME = 4  # a name defined in more files than this is a convention, not a copy
SHINGLE = 4


@dataclass(frozen=True, slots=True)
class Original:
    """What a copy copies: the file, and the definition there ("" for the file as a whole)."""

    path: str
    qname: str


def _stub_source(path: str, paths: set[str]) -> str:
    for suffix, sources in _STUB_SUFFIXES:
        if path.endswith(suffix):
            stem = path[: -len(suffix)]
            return next((stem + s for s in sources if stem + s in paths), "")
    return ""


def _legacy_source(path: str, paths: set[str]) -> str:
    parts = path.split("/")
    for index, part in enumerate(parts[:-1]):
        if _LEGACY.match(part):
            current = "/".join(parts[:index] + parts[index + 1 :])
            if current in paths:
                return current
    return ""


def legacy_files(paths: Iterable[str]) -> frozenset[str]:
    """The files under a legacy folder (``v1``, ``legacy``, ``old``) kept beside current code:
    an older version of a folder that holds a newer one (``src/v3/`` beside ``src/v4/``), or a
    legacy folder beside code that repeats its files (``pydantic/v1/main.py`` beside
    ``pydantic/main.py``: ``SHARED_FILES`` of them, or half). A folder of versions alone
    (``api/v1/``) or beside other code is current."""
    listed = sorted(paths)
    inside: dict[str, list[tuple[str, str]]] = defaultdict(list)  # parent -> (segment, path)
    for path in listed:
        parts = path.split("/")
        for index, part in enumerate(parts[:-1]):
            if _LEGACY.match(part):
                inside["/".join(parts[:index])].append((part, path))
                break
    out: set[str] = set()
    for parent, found in inside.items():
        prefix = parent + "/" if parent else ""
        beside = {
            posixpath.basename(path)
            for path in listed
            if path.startswith(prefix)
            and path.endswith(_CODE)
            and not _LEGACY.match(path[len(prefix) :].split("/", 1)[0])
        }
        # current code beside it that repeats the legacy folder's files: a copy kept, not the
        # only home of that code
        names = {posixpath.basename(path) for _, path in found if path.endswith(_CODE)}
        shared = len(names & beside - {"__init__.py", "index.ts", "index.js"})
        current = shared >= min(SHARED_FILES, max(1, len(names) // 2))
        versions = {int(m.group(1)) for m in (_VERSION.match(segment) for segment, _ in found) if m}
        newest = max(versions, default=-1)
        for segment, path in found:
            version = _VERSION.match(segment)
            if version is None:
                legacy = current or bool(versions)
            else:
                legacy = int(version.group(1)) < newest or (len(versions) == 1 and current)
            if legacy:
                out.add(path)
    return frozenset(out)


def _shares_names(copy: FileFacts, source: FileFacts) -> bool:
    """Whether ``source`` defines most of ``copy``'s top-level names (a stub of a package over
    private modules counts whatever its package's own file holds)."""
    if copy.path.endswith(_PACKAGE_STUBS):
        return True
    mine = {s.name for s in copy.symbols if not s.parent}
    theirs = {s.name for s in source.symbols if not s.parent}
    return bool(mine) and len(mine & theirs) >= SHARED_NAMES * len(mine)


def _shingles(text: str) -> frozenset[str]:
    words = re.findall(r"\w+", text.lower())
    if len(words) <= SHINGLE:
        return frozenset([" ".join(words)])
    return frozenset(" ".join(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1))


class Copies:
    """The copies of one repository's definitions (built once, from its facts)."""

    def __init__(
        self,
        facts: Sequence[FileFacts],
        fan_in: Mapping[str, int],
        text_of: Callable[[str, int, int], str],
    ) -> None:
        """``fan_in``: path -> how many modules import its module; ``text_of(path, start,
        end)``: the text of those lines (for comparing definitions alike by name)."""
        by_path = {f.path: f for f in facts}
        paths = set(by_path)
        self.files: dict[str, str] = {}  # copy file -> the file it copies
        self.definitions: dict[tuple[str, str], Original] = {}  # (path, qname) -> original
        for file in facts:
            source = _stub_source(file.path, paths) or _legacy_source(file.path, paths)
            if source:
                if _shares_names(file, by_path[source]):
                    self.files[file.path] = source
                self._map_file(file, by_path[source], by_path)
            elif file.path.endswith(_PACKAGE_STUBS):
                self._map_file(file, None, by_path)
        self._versions(facts)
        self._alike(facts, fan_in, text_of)
        self.legacy = legacy_files(paths)  # every file of a tree kept beside the current one

    def _map_file(self, copy: FileFacts, source: FileFacts | None, by_path: Mapping[str, FileFacts]) -> None:
        local = {s.qname[len(source.module) + 1 :]: s.qname for s in source.symbols} if source else {}
        package = copy.path.rsplit("/", 1)[0] if "/" in copy.path else ""
        for symbol in copy.symbols:
            inner = symbol.qname[len(copy.module) + 1 :]
            if source is not None and inner in local:
                self.definitions[(copy.path, symbol.qname)] = Original(source.path, local[inner])
            elif copy.path.endswith(_PACKAGE_STUBS) and not symbol.parent:
                # a package's stub over its private modules: the one definition of that name there
                found = [
                    (f.path, s.qname)
                    for f in by_path.values()
                    if f.path.startswith(package + "/")
                    and f.path != copy.path
                    and not f.path.endswith((".pyi", ".d.ts"))
                    for s in f.symbols
                    if s.name == symbol.name and not s.parent
                ]
                if len(found) == 1:
                    self.definitions[(copy.path, symbol.qname)] = Original(found[0][0], found[0][1])

    def _versions(self, facts: Sequence[FileFacts]) -> None:
        """Trees of one folder's versions (``src/v3/`` beside ``src/v4/``): a top-level definition
        of an older one whose name the newest defines once is a copy of that definition."""
        trees: dict[tuple[str, int], list[FileFacts]] = defaultdict(list)  # (parent, version)
        for file in facts:
            parts = file.path.split("/")
            for index, part in enumerate(parts[:-1]):
                found = _VERSION.match(part)
                if found:
                    trees[("/".join(parts[:index]), int(found.group(1)))].append(file)
                    break
        newest: dict[str, int] = {}
        for parent, version in trees:
            newest[parent] = max(newest.get(parent, version), version)
        for (parent, version), files in trees.items():
            if version == newest[parent]:
                continue
            current: dict[str, list[tuple[str, str]]] = defaultdict(list)
            for file in trees[(parent, newest[parent])]:
                for symbol in file.symbols:
                    if not symbol.parent:
                        current[symbol.name].append((file.path, symbol.qname))
            for file in files:
                for symbol in file.symbols:
                    found_there = current.get(symbol.name, [])
                    if (
                        not symbol.parent
                        and len(found_there) == 1
                        and (file.path, symbol.qname) not in self.definitions
                    ):
                        source = next(
                            f for f in trees[(parent, newest[parent])] if f.path == found_there[0][0]
                        )
                        self._map_definition(file, symbol.qname, source, found_there[0][1])

    def _alike(
        self, facts: Sequence[FileFacts], fan_in: Mapping[str, int], text_of: Callable[[str, int, int], str]
    ) -> None:
        named: dict[tuple[str, str], list[tuple[FileFacts, str, int, int]]] = defaultdict(list)
        for file in facts:
            if file.path in self.files or role_of(file.path, file.language) != "source":
                continue
            for symbol in file.symbols:
                if symbol.parent or symbol.end_line - symbol.start_line + 1 < MIN_LINES:
                    continue
                named[(symbol.name, symbol.kind)].append(
                    (file, symbol.qname, symbol.start_line, symbol.end_line)
                )
        for found in named.values():
            files = {f.path for f, _, _, _ in found}
            if len(files) < 2 or len(files) > MAX_SAME_NAME or len(found) != len(files):
                continue
            ranked = sorted(
                found,
                key=lambda d: (
                    -fan_in.get(d[0].path, 0),  # the module more modules import
                    d[1].rsplit(".", 1)[-1] not in (d[0].exports or ()),  # the one its module exports
                    len(d[0].path),
                    d[0].path,
                ),
            )
            original = ranked[0]
            text = _shingles(text_of(original[0].path, original[2], original[3]))
            for other in ranked[1:]:
                theirs = _shingles(text_of(other[0].path, other[2], other[3]))
                if text and theirs and len(text & theirs) / len(text | theirs) >= SAME_TEXT:
                    self._map_definition(other[0], other[1], original[0], original[1])

    def _map_definition(self, copy: FileFacts, qname: str, source: FileFacts, original: str) -> None:
        """``qname`` of ``copy`` (and its members) copy ``original`` of ``source`` (and its
        members of the same names; a member without one, the original itself)."""
        members = {s.qname[len(original) :]: s.qname for s in source.symbols if s.qname.startswith(original)}
        for symbol in copy.symbols:
            if symbol.qname == qname or symbol.qname.startswith(qname + "."):
                rest = symbol.qname[len(qname) :]
                # a member the original lacks gives way to the original definition itself
                found = members.get(rest, original)
                self.definitions[(copy.path, symbol.qname)] = Original(source.path, found)

    def __bool__(self) -> bool:
        return bool(self.files or self.definitions or self.legacy)

    def original_of(self, chunk: Chunk) -> Original | None:
        for qname in chunk.symbols:
            found = self.definitions.get((chunk.path, qname))
            if found is not None:
                return found
        source = self.files.get(chunk.path)
        return Original(source, "") if source else None


def prefer_originals(
    ranked: Sequence[tuple[str, float]],
    chunks: Mapping[str, Chunk],
    copies: Copies,
    by_path: Mapping[str, Sequence[Located]],
    load: Callable[[list[str]], dict[str, Chunk]],
) -> tuple[list[tuple[str, float]], dict[str, Chunk]]:
    """``ranked`` with each copy's place given to its original (ranked there at the copy's
    score, unless ranked before it already) and the copy moved after everything else; also the
    chunks of the originals it brought in."""
    if not copies or not PREFER:
        return list(ranked), {}
    best_of_file: dict[str, str] = {}
    for cid, _ in ranked:
        best_of_file.setdefault(chunks[cid].path, cid)
    out: list[tuple[str, float]] = []
    last: list[tuple[str, float]] = []
    placed: set[str] = set()
    added: dict[str, Chunk] = {}
    for cid, score in ranked:
        if cid in placed:
            continue
        placed.add(cid)
        original = copies.original_of(chunks[cid])
        target = _unit_of(original, by_path, best_of_file) if original is not None else ""
        if target and target not in chunks and target not in added:
            added.update(load([target]))
        if not target or target not in chunks and target not in added:
            (last if chunks[cid].path in copies.legacy else out).append((cid, score))
            continue
        if target not in placed:
            out.append((target, score))
            placed.add(target)
        last.append((cid, score))
    # scores that keep the order (the ranking is sorted by score again downstream): the copies
    # below every other candidate, in their own order
    floor = min((score for _, score in out), default=1.0)
    return out + [(cid, floor * 0.5 / (1 + n)) for n, (cid, _) in enumerate(last)], added


def _unit_of(original: Original, by_path: Mapping[str, Sequence[Located]], best: Mapping[str, str]) -> str:
    """The unit holding ``original``'s definition; for a file, its best-ranked unit (else its
    first)."""
    units = by_path.get(original.path, ())
    if original.qname:
        return next((u.id for u in units if original.qname in u.symbols), "")
    return best.get(original.path) or (units[0].id if units else "")
