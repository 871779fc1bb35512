"""The definitions ``ast`` reads are the ones libcst's facts name: same qualified names,
kinds, spans, signatures, so the first index is cut where the facts cut it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kbc.analyzers.python.analyze import analyze_source
from kbc.analyzers.python.encoding import decode_source
from kbc.analyzers.python.outline import outline
from kbc.domain.models import AnalysisOk, AnalysisTask

TRICKY = textwrap.dedent(
    '''
    """A module with every shape of definition the facts read."""
    from typing import overload
    import typing


    @overload
    def parse(value: int) -> int: ...
    @typing.overload
    def parse(value: str) -> str: ...
    def parse(value):
        """The implementation."""
        return value


    @overload
    def only_stubs(x: int) -> int: ...


    def spaced(  # a comment before the first parameter
        a: int = (1 + 2),  # after the first
        *args: "tuple[int, ...]",
        sep: str = ")",
        **kwargs: dict[str, "int"],
    ) -> dict[str,   int]:
        return {}
        # a comment the body owns


    # a comment the next definition owns
    async def fetch(url, /, *, timeout=3.0) -> (bytes):
        async def inner(): pass
        return b""


    class Base: pass


    class Child(Base, *mixins, metaclass=type, **options):
        """A class."""

        field: int = 0

        @property
        def name(self) -> str:
            def helper():
                return "x"
            return helper()

        if True:
            def conditional(self): ...
        try:
            def guarded(self): ...
        except ImportError:
            def guarded(self): ...
            # owned by the handler's body

    # at column 0: owned by what follows
    def late(): return "é" + "ü"  # non-ASCII before the end
    def unicode_defaults(name="naïve", other=lambda: (1, 2)): ...
    match = 1
    '''
)


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
