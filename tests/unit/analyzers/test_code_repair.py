"""Syntax the TypeScript grammar lacks, mended in place: variance annotations blanked (the
modifiers only, never a parameter named ``in`` or ``out``), and a ``;`` before a generic call
signature that opens a line after another member; never a byte moved."""

from __future__ import annotations

import pytest

from kbc.analyzers.code.repair import blank_variance, separate_signatures


def blanked(written: str) -> str:
    data = written.encode()
    out = bytearray(data)
    blank_variance(data, 0, len(data), out)
    assert len(out) == len(data)
    return out.decode()


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("<out T>", "<    T>"),
        ("<in T, out U = T>", "<   T,     U = T>"),
        ("<in out T>", "<       T>"),
        ("<const in T>", "<const    T>"),
        (
            "<\n  /** why */ out S extends Readonly<X> = X,\n  in P,\n>",
            "<\n  /** why */     S extends Readonly<X> = X,\n     P,\n>",
        ),
        (
            "<out I extends (value: In) => Out = never, in O>",
            "<    I extends (value: In) => Out = never,    O>",
        ),
        ("<T extends Map<in1, out2>>", "<T extends Map<in1, out2>>"),
    ],
)
def test_variance_modifiers_are_blanked(written: str, expected: str) -> None:
    assert blanked(written) == expected


@pytest.mark.parametrize(
    "written", ["<out>", "<in, out>", "<out extends string>", "<out = number>", "<T, in>"]
)
def test_a_parameter_named_in_or_out_is_kept(written: str) -> None:
    assert blanked(written) == written


def separated(written: str) -> str:
    data = written.encode()
    out = bytearray(data)
    separate_signatures(data, set(range(len(written.splitlines()))), out)
    assert len(out) == len(data)
    return out.decode()


def test_a_generic_call_signature_after_a_member_is_set_apart() -> None:
    assert separated("{\n  (a: A): B\n  <T>(t: T): T\n}") == "{\n  (a: A): B\n ;<T>(t: T): T\n}"
    assert separated("{\n  (a: A): B\n  /** doc */\n  <T>(t: T): T\n}") == (
        "{\n  (a: A): B\n  /** doc */\n ;<T>(t: T): T\n}"
    )


@pytest.mark.parametrize(
    "written",
    [
        "f(\n  <T>(t: T) => t\n)",  # an argument: the line before opens a call
        "f(a,\n  <T>(t: T) => t)",  # after a comma
        "const g = (a) =>\n  <T>a",  # an arrow's body
        "{\n<T>(t: T): T\n}",  # no indentation to take a space from
        "x = a\n  << 2",  # a shift
    ],
)
def test_a_line_that_continues_what_is_before_it_is_kept(written: str) -> None:
    assert separated(written) == written
