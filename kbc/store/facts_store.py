"""The facts store: what discover, analyze and graph produced, for later passes.

Layout under the store folder (``<repository>/.kbc`` by default)::

    CURRENT                 name of the live generation, replaced atomically
    gen-<hash>/manifest.json
    gen-<hash>/inventory.json
    gen-<hash>/facts.jsonl  one FileFacts per line, sorted by path
    gen-<hash>/graph.json
    cache/                  the analysis cache (see kbc.store.cache)

A write builds a complete generation beside the live one and then swaps the
``CURRENT`` pointer, so a killed writer leaves the previous store readable. A
build writes its generation unpublished and swaps the pointer only when every
other part of the build is ready too (:mod:`kbc.services.build`).
Every file is deterministic JSON: the same inputs give the same bytes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kbc.domain.codec import dumps, load_as
from kbc.domain.errors import StoreError
from kbc.domain.models import (
    AnalysisFailed,
    EntryPoint,
    FileFacts,
    GraphFacts,
    Inventory,
    SkippedPath,
    SourceFile,
)
from kbc.domain.trust import STORE_MARK
from kbc.store.files import write_atomic

STORE_FORMAT = 1
POINTER = "CURRENT"


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything one analyze run writes."""

    inventory: Inventory
    facts: tuple[FileFacts, ...]
    failures: tuple[AnalysisFailed, ...]
    entry_points: tuple[EntryPoint, ...]  # declared in packaging metadata
    problems: tuple[str, ...]  # non-fatal problems outside any one Python file
    graph: GraphFacts
    versions: dict[str, str]


def _write(path: Path, text: str) -> None:
    _write_lines(path, [text])


def _write_lines(path: Path, lines: list[str]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        fh.writelines(lines)
        fh.flush()
        os.fsync(fh.fileno())


# The facts of the last generation this process wrote or read, named by the file's identity
# (a generation is never rewritten in place: its name is its content's hash), so the passes
# of one build do not parse the same facts again.
_facts_memo: dict[tuple[str, int, int, int], tuple[FileFacts, ...]] = {}


def _identity(path: Path) -> tuple[str, int, int, int]:
    stat = path.stat()
    return (str(path), stat.st_ino, stat.st_size, stat.st_mtime_ns)


def _remember(path: Path, facts: tuple[FileFacts, ...]) -> None:
    try:
        key = _identity(path)
    except OSError:
        return
    _facts_memo.clear()
    _facts_memo[key] = facts


def forget_facts() -> None:
    """Drop the facts kept of the last generation read: a build lets go of them before the
    passes that need the memory (the embedding model, the vectors read back)."""
    _facts_memo.clear()


class FactsStore:
    """The facts of the live generation, or of the generation named ``generation`` (a build's
    own, before it is published)."""

    def __init__(self, root: Path, generation: str = "") -> None:
        self.root = root
        self.named = generation

    # -- writing ------------------------------------------------------------

    def write(self, snapshot: Snapshot, *, publish: bool = True) -> str:
        """Write ``snapshot`` as a generation and (``publish``) make it the live one; returns
        its name."""
        self.root.mkdir(parents=True, exist_ok=True)
        ignore = self.root / ".gitignore"
        if not ignore.exists():
            _write(ignore, f"{STORE_MARK}: generated, not for version control\n*\n")
        inventory = snapshot.inventory
        facts = tuple(sorted(snapshot.facts, key=lambda f: f.path))
        # Files as lists of lines: a large repository's facts run to many megabytes, and
        # joining them into one string costs more than writing them.
        files: dict[str, list[str]] = {
            "inventory.json": [
                dumps(
                    {
                        "vcs": inventory.vcs,
                        "commit": inventory.commit,
                        "ignored": inventory.ignored,
                        "files": inventory.files,
                        "skipped": inventory.skipped,
                    }
                )
                + "\n"
            ],
            "facts.jsonl": [dumps(f) + "\n" for f in facts],
            "graph.json": [dumps(snapshot.graph) + "\n"],
            "problems.json": [
                dumps(
                    {
                        "failures": sorted(snapshot.failures, key=lambda f: f.path),
                        "metadata": list(snapshot.problems),
                    },
                    indent=1,
                )
                + "\n"
            ],
            "entry_points.json": [
                dumps(sorted(snapshot.entry_points, key=lambda e: (e.path, e.line, e.name)), indent=1) + "\n"
            ],
        }
        digest = hashlib.sha256()
        for name in sorted(files):
            digest.update(name.encode() + b"\0")
            for line in files[name]:
                digest.update(line.encode())
            digest.update(b"\0")
        manifest = {
            "format": STORE_FORMAT,
            "versions": snapshot.versions,
            "commit": inventory.commit,
            "content": digest.hexdigest(),
            "counts": {
                "files": len(inventory.files),
                "python_files": len(snapshot.facts) + len(snapshot.failures),
                "analyzed": len(snapshot.facts),
                "failed": len(snapshot.failures),
                "skipped": len(inventory.skipped),
                "ignored": inventory.ignored,
                "symbols": sum(len(f.symbols) for f in snapshot.facts),
                "import_edges": len(snapshot.graph.import_edges),
                "call_edges": len(snapshot.graph.call_edges),
            },
        }
        files["manifest.json"] = [dumps(manifest, indent=1) + "\n"]
        name = "gen-" + digest.hexdigest()[:16]
        target = self.root / name
        if target.is_dir() and not _holds(target, files):
            # Same content, damaged on disk: set it aside (swept below) and write it again.
            os.replace(target, Path(tempfile.mkdtemp(prefix="tmp-", dir=self.root)) / name)
        if not target.is_dir():
            staging = Path(tempfile.mkdtemp(prefix="tmp-", dir=self.root))
            for filename, lines in files.items():
                _write_lines(staging / filename, lines)
            os.replace(staging, target)
        _remember(target / "facts.jsonl", facts)
        if publish:
            self.publish(name)
        return name

    def publish(self, name: str) -> None:
        """Make the generation ``name`` the live one; the others go."""
        write_atomic(self.root / POINTER, name + "\n")
        self._sweep(keep=name)

    def current(self) -> str:
        """The live generation's name ("" when there is none)."""
        try:
            return (self.root / POINTER).read_text(encoding="utf-8").strip()
        except OSError:
            return ""

    def _sweep(self, keep: str) -> None:
        for child in self.root.iterdir():
            stale_gen = child.name.startswith("gen-") and child.name != keep
            if (stale_gen or child.name.startswith("tmp-")) and child.is_dir():
                shutil.rmtree(child, ignore_errors=True)

    # -- reading ------------------------------------------------------------

    def generation(self) -> Path:
        pointer = self.root / POINTER
        try:
            name = self.named or pointer.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            raise StoreError(
                f"no facts in the kbc store at {self.root}",
                hint="run `kbc analyze` or `kbc build` on the repository first (after a first build, "
                "which reads the facts in the background, `kbc embed` waits for them)",
            ) from None
        path = self.root / name
        if not path.is_dir():
            raise StoreError(
                f"the store at {self.root} points at a missing generation {name}",
                hint="run `kbc analyze` again to rebuild it",
            )
        return path

    def _json(self, filename: str) -> Any:
        import json

        path = self.generation() / filename
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise StoreError(
                f"cannot read {path}: {exc}", hint="run `kbc analyze` again to rebuild the store"
            ) from None

    def manifest(self) -> dict[str, Any]:
        manifest: dict[str, Any] = self._json("manifest.json")
        if manifest.get("format") != STORE_FORMAT:
            raise StoreError(
                f"the store at {self.root} has format {manifest.get('format')}, "
                f"this kbc reads format {STORE_FORMAT}",
                hint="run `kbc analyze` to rebuild it",
            )
        return manifest

    def inventory(self, root: str = "") -> Inventory:
        data = self._json("inventory.json")
        return Inventory(
            root=root,
            vcs=data["vcs"],
            commit=data["commit"],
            files=tuple(load_as(SourceFile, f) for f in data["files"]),
            skipped=tuple(load_as(SkippedPath, s) for s in data["skipped"]),
            ignored=data["ignored"],
        )

    def facts(self) -> Iterator[FileFacts]:
        import json

        path = self.generation() / "facts.jsonl"
        try:
            known = _facts_memo.get(_identity(path))
        except OSError:
            known = None
        if known is not None:
            yield from known
            return
        read: list[FileFacts] = []
        try:
            with path.open(encoding="utf-8") as fh:
                for line in fh:
                    read.append(load_as(FileFacts, json.loads(line)))
                    yield read[-1]
        except (OSError, ValueError) as exc:
            raise StoreError(
                f"cannot read {path}: {exc}", hint="run `kbc analyze` again to rebuild the store"
            ) from None
        _remember(path, tuple(read))

    def graph(self) -> GraphFacts:
        return load_as(GraphFacts, self._json("graph.json"))

    def failures(self) -> list[AnalysisFailed]:
        return [load_as(AnalysisFailed, f) for f in self._json("problems.json")["failures"]]

    def entry_points(self) -> list[EntryPoint]:
        return [load_as(EntryPoint, e) for e in self._json("entry_points.json")]


def _holds(folder: Path, files: dict[str, list[str]]) -> bool:
    """Whether ``folder`` holds exactly these files' texts (a generation written whole)."""

    def digest(lines: list[str]) -> bytes:
        hashed = hashlib.sha256()
        for line in lines:
            hashed.update(line.encode("utf-8"))
        return hashed.digest()

    try:
        return all(
            hashlib.sha256((folder / name).read_bytes()).digest() == digest(lines)
            for name, lines in files.items()
        )
    except OSError:
        return False
