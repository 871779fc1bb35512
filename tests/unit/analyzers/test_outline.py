"""The definitions ``ast`` reads are the ones libcst's facts name: same qualified names,
kinds, spans, signatures, so the first index is cut where the facts cut it."""

from __future__ import annotations

from pathlib import Path

import pytest
from definition_shapes import TRICKY

from kbc.analyzers.python.analyze import analyze_source
from kbc.analyzers.python.encoding import decode_source
from kbc.analyzers.python.outline import outline
from kbc.domain.models import AnalysisOk, AnalysisTask


def _facts(text: str, module: str = "pkg.mod") -> list[tuple[object, ...]]:
    task = AnalysisTask("pkg/mod.py", "pkg/mod.py", module, False, (), True)
    result = analyze_source(text.encode(), task)
    assert isinstance(result, AnalysisOk), result
    return [
        (s.qname, s.name, s.kind, s.start_line, s.end_line, s.signature, s.is_async)
        for s in result.facts.symbols
    ]


def _outlined(text: str, module: str = "pkg.mod") -> list[tuple[object, ...]]:
    found = outline(text, module)
    assert found is not None
    return [(d.qname, d.name, d.kind, d.start, d.end, d.signature, d.is_async) for d in found]


def test_every_shape_of_definition_is_read_as_the_facts_read_it() -> None:
    expected = _facts(TRICKY)
    assert _outlined(TRICKY) == expected
    names = {q for q, *_ in expected}
    assert {
        "pkg.mod.parse",
        "pkg.mod.only_stubs",
        "pkg.mod.Child.name.helper",
        "pkg.mod.Child.guarded",
    } <= names


def test_a_file_python_does_not_parse_has_no_outline() -> None:
    assert outline("def broken(:\n    pass\n", "m") is None
    assert outline("x = 1\0\n", "m") is None


@pytest.mark.slow
def test_kbc_s_own_files_are_cut_where_the_facts_cut_them() -> None:
    package = Path(__file__).resolve().parents[3] / "kbc"
    files = sorted(package.rglob("*.py"))
    assert len(files) > 100
    differ = []
    for path in files:
        data = path.read_bytes()
        text, _ = decode_source(data)
        task = AnalysisTask(str(path), str(path), "kbc.x", False, (), True)
        result = analyze_source(data, task)
        assert isinstance(result, AnalysisOk)
        facts = [
            (s.qname, s.kind, s.start_line, s.end_line, s.signature, s.is_async) for s in result.facts.symbols
        ]
        found = outline(text, "kbc.x") or ()
        if [(d.qname, d.kind, d.start, d.end, d.signature, d.is_async) for d in found] != facts:
            differ.append(str(path))
    assert differ == []
