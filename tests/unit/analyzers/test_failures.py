"""Per-file results: a broken file becomes a failure value with a position, never an exception."""

from kbc.analyzers.python.analyze import analyze_file, analyze_source, decode_source
from kbc.domain.models import AnalysisFailed, AnalysisOk, AnalysisTask

TASK = AnalysisTask("pkg/mod.py", "/nonexistent/pkg/mod.py", "pkg.mod", False)


def test_syntax_error_reports_the_interpreters_message_and_position() -> None:
    result = analyze_source(b"x = 1\ndef broken(:\n    pass\n", TASK)
    assert isinstance(result, AnalysisFailed)
    assert (result.line, result.error) == (2, "syntax error: invalid syntax")
    assert result.blob


def test_code_python_rejects_after_parsing_is_a_syntax_error() -> None:
    source = b"try:\n    pass\nexcept:\n    pass\nexcept ValueError:\n    pass\n"
    result = analyze_source(source, TASK)
    assert isinstance(result, AnalysisFailed)
    assert result.error.startswith("syntax error: The bare except: handler must be the last one")


def test_an_unreadable_file_is_a_failure() -> None:
    result = analyze_file(TASK)
    assert isinstance(result, AnalysisFailed) and result.error.startswith("cannot read")


def test_coding_cookie_and_bom_are_honoured() -> None:
    assert decode_source("# coding: latin-1\nx = 'é'\n".encode("latin-1")) == (
        "# coding: latin-1\nx = 'é'\n",
        (),
    )
    assert decode_source(b"\xef\xbb\xbfx = 1\n") == ("x = 1\n", ())


def test_undeclared_latin1_is_read_with_a_warning() -> None:
    result = analyze_source("def café(): ...\n".encode("latin-1"), TASK)
    assert isinstance(result, AnalysisOk)
    assert result.facts.symbols[0].name == "café"
    assert result.facts.warnings == ("not valid utf-8 and no usable coding cookie; read as latin-1",)


NESTED_TOO_DEEPLY = {
    "calls": "X = " + "f(" * 1500 + "1" + ")" * 1500 + "\n",
    "sum": "Y = " + " + ".join(["a"] * 10_000) + "\n",
    "conjunction": "Z = " + " and ".join(["a"] * 10_000) + "\n",
    "disjunction_over_lines": "Z = (a\n" + "    or a\n" * 10_000 + ")\n",
    "elif": "if x:\n    pass\n" + "elif x:\n    pass\n" * 10_000,
    "broken_and_nested": "print 'py2'\nX = " + "[" * 5000 + "]" * 5000 + "\n",
}


def test_code_nested_deeper_than_the_parser_can_take_fails_alone_in_the_process() -> None:
    """Each of these kills the process in libcst's native parser (a stack overflow); here
    each is a failure value, and the process goes on to parse the next file."""
    for name, source in NESTED_TOO_DEEPLY.items():
        result = analyze_source(source.encode(), TASK)
        assert isinstance(result, AnalysisFailed), name
        assert result.error == "nested too deeply for the parser", name
    fine = analyze_source(b"Y = " + b" and ".join([b"a"] * 50) + b"\ndef f():\n    return (((1)))\n", TASK)
    assert isinstance(fine, AnalysisOk) and [s.name for s in fine.facts.symbols] == ["f"]
