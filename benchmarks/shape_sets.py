"""The question sets of ``benchmarks/shapes.py``: each set read with its hunks, each question's
repository and team-note corpus checked out, the key its store is kept under, every question
asked where nothing answers it (:func:`foreign`), and the texts BM25 over whole files reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

Row = dict[str, Any]


def load_set(folder: Path) -> list[Row]:
    rows = [
        json.loads(line) for line in (folder / "instances.jsonl").read_text().splitlines() if line.strip()
    ]
    hunks_file = folder / "hunks.jsonl"
    if hunks_file.exists():
        hunks = {
            r["instance_id"]: r["hunks"]
            for r in (json.loads(line) for line in hunks_file.read_text().splitlines() if line.strip())
        }
        for row in rows:
            row.setdefault("hunks", hunks.get(row["instance_id"], {}))
    for row in rows:
        row.setdefault("shape", "issue")
        row["set"] = folder.name
        row["set_dir"] = str(folder.resolve())
    return rows


def check_out(mirror_root: Path, repo: str, commit: str, tree: Path) -> Path:
    from localization import checkout

    owner, name = repo.split("/")
    tree.parent.mkdir(parents=True, exist_ok=True)
    checkout(mirror_root / f"{owner}+{name}" / "repo", tree, commit)
    return tree


def corpus_root(row: Row, mirror_root: Path, work: Path) -> tuple[str, Path] | None:
    """The question's team-note corpus: (name, folder), checked out when it lives in a mirror."""
    known = row.get("knowledge")
    if not known:
        return None
    if "local" in known:
        return known["name"], Path(row["set_dir"]) / known["local"]
    tree = work / "corpora" / f"{known['repo'].replace('/', '+')}@{known['commit'][:12]}"
    if not tree.exists():
        check_out(mirror_root, known["repo"], known["commit"], tree)
    return known["name"], tree / known.get("dir", "")


def store_key(row: Row, hybrid: bool) -> str:
    key = f"{row['repo'].replace('/', '+')}@{row['base_commit'][:12]}"
    if row.get("knowledge"):
        key += f"+{row['knowledge']['name']}"
    return key + ("-hybrid" if hybrid else "")


def foreign(rows: list[Row]) -> list[Row]:
    """Each question asked where nothing answers it (shape ``foreign``, no gold): a team-note
    question of its repository without the notes; any other of another repository's tree (the
    next repository's first question's, in name order)."""
    repos = sorted({r["repo"] for r in rows})
    first = {
        repo: next((r for r in rows if r["repo"] == repo and not r.get("knowledge")), None) for repo in repos
    }
    out = []
    for row in rows:
        if row.get("knowledge"):
            asked = {k: v for k, v in row.items() if k != "knowledge"}
            asked.update(
                instance_id=row["instance_id"] + "~foreign", shape="foreign", gold_files=[], hunks={}
            )
            out.append(asked)
            continue
        other = first[repos[(repos.index(row["repo"]) + 1) % len(repos)]]
        if other is None or other["repo"] == row["repo"]:
            continue
        asked = {k: v for k, v in other.items() if k not in ("instance_id", "problem_statement")}
        asked.update(
            instance_id=row["instance_id"] + "~foreign",
            problem_statement=row["problem_statement"],
            shape="foreign",
            gold_files=[],
            hunks={},
        )
        out.append(asked)
    return out


def line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def document_texts(tree: Path, paths: list[str], corpus: tuple[str, Path] | None) -> dict[str, str]:
    """Every repository file and note, by its path in the index."""
    from kbc.domain.models import KNOWLEDGE_PREFIX

    texts = {}
    for path in paths:
        if path.startswith(KNOWLEDGE_PREFIX):
            if corpus is None:
                continue
            name, root = corpus
            inner = path[len(KNOWLEDGE_PREFIX) + len(name) + 1 :]
            target = root / inner
        else:
            target = tree / path
        try:
            texts[path] = target.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return texts
