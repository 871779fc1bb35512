"""Team knowledge beside the code: the knowledge pass of a build, and the scopes retrieval reads.

The build reads every configured knowledge root (a folder, or a repository followed by URL),
hands its Markdown to the index as ``@knowledge/<root>/<path>`` documents, and writes the
manifest ``<store>/knowledge.json``: each root (where it is, the commit it was read at) and
each document's scopes, refs and last commit. A root that cannot be read is reported and
left out; the rest of the build goes on.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kbc.analyzers.gitrepo import Limits
from kbc.analyzers.knowledge import KnowledgeDocument, OpenedRoot, is_project, open_root, read_documents
from kbc.domain.errors import KbcError
from kbc.domain.knowledge_roots import KnowledgeRoot
from kbc.domain.settings import Settings
from kbc.services.reads import ScopeSummary
from kbc.store.files import write_atomic
from kbc.store.layout import knowledge_file


@dataclass(frozen=True, slots=True)
class RootRecord:
    name: str
    where: str  # as configured: a path or a URL
    folder: str  # its work tree on this machine
    url: str = ""
    branch: str = ""
    head: str = ""  # the commit the documents were read at ("" outside git)


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    root: str
    path: str  # relative to the root
    scopes: tuple[str, ...]
    refs: tuple[str, ...] = ()
    commit: str = ""
    date: str = ""
    secrets: int = 0  # credentials found in it (its own, or the repository's repeated): not served


@dataclass(frozen=True, slots=True)
class Manifest:
    roots: tuple[RootRecord, ...] = ()
    documents: dict[str, DocumentRecord] = field(default_factory=dict)  # indexed path -> record
    problems: tuple[str, ...] = ()
    digest: str = ""  # of every root's configuration and every document's text and scopes

    def root(self, name: str) -> RootRecord | None:
        return next((r for r in self.roots if r.name == name), None)

    def scopes(self) -> dict[str, int]:
        """Every scope and how many documents are in it."""
        counts: Counter[str] = Counter(s for d in self.documents.values() for s in d.scopes)
        return dict(sorted(counts.items()))


@dataclass(frozen=True, slots=True)
class Collected:
    documents: tuple[KnowledgeDocument, ...]
    manifest: Manifest

    def texts(self) -> dict[str, str]:
        return {d.indexed_path: d.text for d in self.documents}

    def dates(self) -> dict[str, str]:
        """Indexed path -> how each document is dated in a slice: "last commit YYYY-MM-DD", or
        "modified YYYY-MM-DD" outside git."""
        return {
            d.indexed_path: f"{'last commit' if d.commit else 'modified'} {d.date}"
            for d in self.documents
            if d.date
        }


def roots_to_read(settings: Settings, store_root: Path) -> tuple[KnowledgeRoot, ...]:
    """The configured roots; with none configured, the roots the store was last built with
    (a root given once with --knowledge stays), unless told to forget them (--knowledge none)."""
    if settings.knowledge or settings.forget_knowledge:
        return settings.knowledge
    return tuple(
        KnowledgeRoot(r.name, "" if r.url else r.where, r.url, r.branch if r.url else "")
        for r in read_manifest(store_root).roots
    )


def collect(
    repo: Path,
    settings: Settings,
    roots: Sequence[KnowledgeRoot] | None = None,
    also: frozenset[str] = frozenset(),
) -> Collected:
    """Every root's documents (``roots``, default the configured ones), with ``also`` (the
    repository's credential values) redacted wherever they repeat one; a root that cannot be
    opened is a problem, not a stop."""
    documents: list[KnowledgeDocument] = []
    records: list[RootRecord] = []
    problems: list[str] = []
    for root in settings.knowledge if roots is None else roots:
        try:
            opened: OpenedRoot = open_root(root, repo, settings.data_dir, Limits.of(settings))
        except KbcError as error:
            problems.append(f"{root.name}: {error.message}")
            continue
        found, unread = read_documents(opened, settings.max_file_bytes, also)
        documents.extend(found)
        problems.extend(unread)
        records.append(
            RootRecord(root.name, root.where, str(opened.folder), root.url, opened.branch, opened.head)
        )
    by_path = {
        d.indexed_path: DocumentRecord(d.root, d.path, d.scopes, d.refs, d.commit, d.date, d.redacted)
        for d in documents
    }
    # Of the documents as written: what the repository's values redact is not a change of theirs.
    described = [
        [asdict(r) for r in records],
        sorted((d.indexed_path, d.source, d.scopes, d.refs, d.commit) for d in documents),
    ]
    digest = hashlib.sha256(json.dumps(described).encode()).hexdigest()[:16]
    return Collected(tuple(documents), Manifest(tuple(records), by_path, tuple(problems), digest))


def write_manifest(store_root: Path, manifest: Manifest) -> None:
    data = {
        "roots": [asdict(r) for r in manifest.roots],
        "documents": {p: asdict(d) for p, d in sorted(manifest.documents.items())},
        "problems": list(manifest.problems),
        "digest": manifest.digest,
    }
    write_atomic(knowledge_file(store_root), json.dumps(data, indent=1, sort_keys=True))


def read_manifest(store_root: Path) -> Manifest:
    """The manifest of the last build; empty when it had no knowledge root."""
    try:
        data: dict[str, Any] = json.loads(knowledge_file(store_root).read_text(encoding="utf-8"))
        roots = tuple(RootRecord(**r) for r in data.get("roots", []))
        documents = {
            p: DocumentRecord(**{**d, "scopes": tuple(d["scopes"]), "refs": tuple(d["refs"])})
            for p, d in data.get("documents", {}).items()
        }
        return Manifest(roots, documents, tuple(data.get("problems", [])), str(data.get("digest", "")))
    except (OSError, ValueError, TypeError, KeyError):
        return Manifest()


def knowledge_moved(repo: Path, settings: Settings, store_root: Path) -> bool:
    """Whether the knowledge roots (their configuration, documents or commits) differ from
    what the last build indexed: a refresh then indexes them again."""
    roots = roots_to_read(settings, store_root)
    if not roots and not read_manifest(store_root).roots:
        return False
    return collect(repo, settings, roots).manifest.digest != read_manifest(store_root).digest


def chosen_scopes(manifest: Manifest, asked: Sequence[str] | None, default: Sequence[str]) -> frozenset[str]:
    """The scopes a request reads: those it names; else the configured default; else every
    scope but the ``projects/...`` ones (one project's notes stay out of another's slice)."""
    if asked:
        unknown = sorted(set(asked) - set(manifest.scopes()))
        if unknown and manifest.documents:
            raise KbcError(
                f"no knowledge scope named {', '.join(map(repr, unknown))}",
                hint=f"scopes: {', '.join(manifest.scopes()) or 'none'} (`kbc scopes`)",
            )
        return frozenset(asked)
    if default:
        return frozenset(default)
    return frozenset(s for s in manifest.scopes() if not is_project(s))


def excluded(manifest: Manifest, scopes: Iterable[str]) -> frozenset[str]:
    """The documents outside ``scopes``: what a request may not be handed."""
    wanted = set(scopes)
    return frozenset(path for path, d in manifest.documents.items() if not wanted.intersection(d.scopes))


def outside(manifest: Manifest, asked: Sequence[str] | None, default: Sequence[str]) -> frozenset[str]:
    """The documents a request may not be handed: those outside the scopes it reads (see
    :func:`chosen_scopes`); naming scopes when no knowledge root was indexed is an error."""
    if not manifest.documents:
        if asked:
            raise KbcError(
                "no knowledge scope: no knowledge root was indexed",
                hint="configure [[knowledge]] or --knowledge, then `kbc build`",
            )
        return frozenset()
    return excluded(manifest, chosen_scopes(manifest, asked, default))


# Where team knowledge stands in a slice, by scope: what the domain is, then how the team works,
# then a project's own notes, then the rest.
SCOPE_ORDER = ("domain", "conventions", "projects")


def knowledge_order(manifest: Manifest) -> dict[str, int]:
    """Each knowledge document's place in a slice: its best scope's rank in SCOPE_ORDER."""

    def place(scope: str) -> int:
        head = scope.split("/", 1)[0]
        return SCOPE_ORDER.index(head) if head in SCOPE_ORDER else len(SCOPE_ORDER)

    return {
        path: min((place(s) for s in record.scopes), default=len(SCOPE_ORDER))
        for path, record in manifest.documents.items()
    }


def scope_summaries(manifest: Manifest, default_scopes: Sequence[str]) -> list[ScopeSummary]:
    """Every knowledge scope: its name, documents, roots, and whether a request that names no
    scope reads it (``scopes.default``, else every scope but the projects/... ones)."""
    default = chosen_scopes(manifest, None, default_scopes)
    roots: dict[str, set[str]] = {}
    for record in manifest.documents.values():
        for scope in record.scopes:
            roots.setdefault(scope, set()).add(record.root)
    return [
        ScopeSummary(
            scope=scope, documents=count, roots=tuple(sorted(roots.get(scope, ()))), default=scope in default
        )
        for scope, count in manifest.scopes().items()
    ]
