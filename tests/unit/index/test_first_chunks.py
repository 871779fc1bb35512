"""A Python file the facts have not read yet is cut at the definitions ``ast`` reads: the
units the facts' definitions give, and no credential in a signature."""

from __future__ import annotations

from pathlib import Path

from definition_shapes import TRICKY

from kbc.analyzers.python.analyze import analyze_source
from kbc.domain.models import AnalysisOk, AnalysisTask, SourceFile
from kbc.index.prepare import chunk_tasks, prepare

KEY = "AKIAUJZDEGXDNCF32EPF"
LEAKY = f'''"""Connects."""


def connect(host: str, key: str = "{KEY}") -> None:
    """Open the connection."""
    return None


class Client:
    def login(self, token="{KEY}"):
        return token
'''


def _source(root: Path, path: str, text: str) -> SourceFile:
    (root / path).write_text(text)
    return SourceFile(path, len(text.encode()), "0" * 40, "python", text.count("\n") + 1)


def test_a_file_without_facts_is_cut_into_the_units_its_facts_give(tmp_path: Path) -> None:
    source = _source(tmp_path, "mod.py", TRICKY)
    task = AnalysisTask("mod.py", str(tmp_path / "mod.py"), "pkg.mod", False, (), True)
    result = analyze_source(TRICKY.encode(), task)
    assert isinstance(result, AnalysisOk)
    facts = {"mod.py": result.facts}
    known = result.facts.blob
    source = SourceFile("mod.py", source.size, known, "python", source.lines)
    (by_facts,) = chunk_tasks(tmp_path, [source], facts, 60, 12, {})
    (outlined,) = chunk_tasks(tmp_path, [source], {}, 60, 12, {}, modules={"mod.py": "pkg.mod"})
    assert by_facts.definitions and not by_facts.outlined
    assert outlined.definitions is None and outlined.outlined
    assert prepare(outlined) == prepare(by_facts)


def test_a_file_not_of_the_modules_keeps_line_windows(tmp_path: Path) -> None:
    source = _source(tmp_path, "script.py", LEAKY)
    (task,) = chunk_tasks(tmp_path, [source], {}, 60, 12, {})
    assert not task.outlined
    _, chunks, _, _ = prepare(task)
    assert {c.unit for c in chunks} == {"window"}


def test_no_signature_of_a_first_index_carries_a_credential(tmp_path: Path) -> None:
    source = _source(tmp_path, "client.py", LEAKY)
    (task,) = chunk_tasks(tmp_path, [source], {}, 60, 12, {}, modules={"client.py": "client"})
    _, chunks, secrets, _ = prepare(task)
    assert secrets >= 1
    assert {"client.connect", "client.Client.login"} <= {s for c in chunks for s in c.symbols}
    for chunk in chunks:
        assert KEY not in chunk.text and KEY not in chunk.context and KEY not in chunk.heading
