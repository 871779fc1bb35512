"""Knowledge drift over a repository: the store's facts and inventory, git history, the documents."""

from __future__ import annotations

from pathlib import Path

from kbc.analyzers.drift import Commit, check_document, commits_since, last_commits, parse_front_matter
from kbc.domain.drift import DriftReport
from kbc.graph.mentions import MentionChecker
from kbc.graph.symbols import SymbolTable
from kbc.store.facts_store import FactsStore

MAX_FILES_SHOWN = 10


def find_drift(root: Path, store_root: Path) -> list[DriftReport]:
    """The Markdown documents of ``root`` that are behind the code, sorted by path.

    Reads the tracked files and the Python facts from the store at
    ``store_root`` (built by ``kbc analyze``), the documents from the work tree
    and their history from git (none for a plain directory: then only the
    mentions and the refs are checked).
    """
    root = root.resolve()
    store = FactsStore(store_root)
    inventory = store.inventory(str(root))
    tracked = sorted({f.path for f in inventory.files} | {s.path for s in inventory.skipped})
    documents: dict[str, str] = {}
    for file in inventory.files:
        if file.language == "markdown":
            text = _read(root, file.path)
            if text is not None:
                documents[file.path] = text

    def read_source(path: str) -> str:
        return _read(root, path) or ""

    code = MentionChecker(SymbolTable(store.facts(), read_source))
    last = last_commits(root, documents) if inventory.vcs == "git" else {}
    histories: dict[str, list[Commit]] = {}
    reports: list[DriftReport] = []
    for path in sorted(documents):
        front = parse_front_matter(documents[path])
        commit = last.get(path)
        history: list[Commit] = []
        if commit is not None and front.refs:
            if commit[0] not in histories:
                histories[commit[0]] = commits_since(root, commit[0])
            history = histories[commit[0]]
        report = check_document(path, front, tracked=tracked, code=code, last=commit, history=history)
        if report is not None:
            reports.append(report)
    reports.extend(_knowledge_drift(root, store_root, tracked, code, inventory.vcs == "git"))
    return reports


REPO_REF = "repo:"  # a knowledge document's ref naming the compiled repository's code


def _knowledge_drift(
    root: Path, store_root: Path, tracked: list[str], code: MentionChecker, in_git: bool
) -> list[DriftReport]:
    """The knowledge documents behind this repository's code: their refs (``repo:`` globs, or
    plain ones) are matched against this repository, and its commits made after the
    document's last commit in its own repository are the ones that count."""
    from dataclasses import replace

    from kbc.analyzers.drift import commit_time, commits_after
    from kbc.services.team import read_manifest

    manifest = read_manifest(store_root)
    reports: list[DriftReport] = []
    for indexed, record in sorted(manifest.documents.items()):
        own = manifest.root(record.root)
        if own is None or not record.refs:
            continue
        text = _read(Path(own.folder), record.path)
        if text is None:
            continue
        front = parse_front_matter(text)
        refs = tuple(r.removeprefix(REPO_REF) for r in front.refs if ":" not in r or r.startswith(REPO_REF))
        front = replace(front, refs=refs)
        history: list[Commit] = []
        if in_git and record.commit:
            moment = commit_time(Path(own.folder), record.commit)
            history = commits_after(root, moment) if moment else []
        last = (record.commit, record.date) if record.commit else None
        report = check_document(indexed, front, tracked=tracked, code=code, last=last, history=history)
        if report is not None:
            reports.append(report)
    return reports


def _read(root: Path, path: str) -> str | None:
    try:
        return (root / path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def render_drift(reports: list[DriftReport]) -> str:
    """Terminal text: one block per document, each reason on its own lines."""
    if not reports:
        return "No document is behind the code.\n"
    blocks: list[str] = []
    for report in reports:
        head = report.path
        if report.last_commit:
            head += f"  (last commit {report.last_commit[:12]}, {report.last_date})"
        lines = [head]
        for reason in report.reasons:
            if reason.kind == "code_changed":
                lines.append(
                    f"  code changed: {reason.commits_since} commit"
                    f"{'' if reason.commits_since == 1 else 's'} since, latest {reason.last_change}"
                )
                lines.extend(f"    {f}" for f in reason.files[:MAX_FILES_SHOWN])
                if len(reason.files) > MAX_FILES_SHOWN:
                    lines.append(f"    … and {len(reason.files) - MAX_FILES_SHOWN} more")
            elif reason.kind == "missing_symbols":
                lines.append("  missing symbols: " + ", ".join(f"`{n}`" for n in reason.names))
            elif reason.kind == "stale_ref":
                lines.append("  stale refs (match no tracked file): " + ", ".join(reason.refs))
            else:
                lines.append(f"  bad front-matter: {reason.detail}")
        blocks.append("\n".join(lines) + "\n")
    behind = len(reports)
    summary = f"{behind} document{'' if behind == 1 else 's'} behind the code.\n"
    return "\n".join(blocks) + "\n" + summary
