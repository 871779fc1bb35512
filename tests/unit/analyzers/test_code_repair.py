"""Type parameter variance annotations, which the TypeScript grammar lacks, blanked in place:
the modifiers only, never a parameter that is named ``in`` or ``out``, and never a byte moved."""

from __future__ import annotations

import pytest

from kbc.analyzers.code.repair import blank_variance


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
