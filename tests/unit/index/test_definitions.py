"""Definition-level units: code cut at the definitions the facts found."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kbc.analyzers.python.analyze import analyze_source
from kbc.domain.models import AnalysisOk, AnalysisTask, Chunk
from kbc.index import definitions as definitions_module
from kbc.index.chunks import chunk_text, split_lines
from kbc.index.definitions import Definition, Piece, _long_statements, _statements

SOURCE = '''"""Orders and their refunds."""
import os
from decimal import Decimal

LIMIT = 180


# Money is never a float.
@dataclass
def total(items):
    return sum(i.price for i in items)


class Refund(Base):
    """A refund of an order."""

    amount: Decimal = Decimal(0)

    # the window is counted in days
    def allowed(self, days):
        def inner():
            return days
        return inner() <= LIMIT

    reason = "none"

    def issue(self):
        return self.amount


if __name__ == "__main__":
    total([])
'''


def definitions(source: str, module: str = "shop.orders") -> tuple[Definition, ...]:
    result = analyze_source(source.encode(), AnalysisTask("shop/orders.py", "", module, False))
    assert isinstance(result, AnalysisOk), result
    return tuple(
        Definition(s.qname, s.name, s.kind, s.start_line, s.end_line, s.signature, s.is_async)
        for s in result.facts.symbols
    )


def units(source: str, size: int = 60) -> list[Chunk]:
    return chunk_text(
        "shop/orders.py",
        source,
        "python",
        size=size,
        overlap=12,
        module="shop.orders",
        definitions=definitions(source),
    )


def test_each_definition_is_a_unit_with_its_exact_span_and_a_class_gets_an_outline() -> None:
    found = [(c.start_line, c.end_line, c.unit, c.symbols, c.heading) for c in units(SOURCE)]
    assert found == [
        (1, 7, "prelude", (), ""),
        (8, 13, "function", ("shop.orders.total",), ""),  # its comment above it, its blank lines after
        (14, 18, "class", ("shop.orders.Refund",), ""),
        (
            19,
            24,
            "method",
            ("shop.orders.Refund.allowed", "shop.orders.Refund.allowed.inner"),
            "class Refund(Base)",
        ),
        (25, 26, "class", (), "class Refund(Base)"),  # class-level code between methods
        (27, 30, "method", ("shop.orders.Refund.issue",), "class Refund(Base)"),
        (31, 32, "module", (), ""),
    ]
    outline = next(c for c in units(SOURCE) if c.unit == "class" and c.symbols)
    assert outline.context == "def allowed(self, days)\ndef issue(self)"  # indexed, never printed
    assert "def allowed" not in outline.text


def test_ids_do_not_change_when_unrelated_code_moves() -> None:
    before = {c.symbols[0]: c for c in units(SOURCE) if c.symbols}
    edited = SOURCE.replace("LIMIT = 180\n", "LIMIT = 180\nFLOOR = 0\nCEILING = 9\n")
    after = {c.symbols[0]: c for c in units(edited) if c.symbols}
    for name in before:
        assert after[name].id == before[name].id
        assert after[name].start_line == before[name].start_line + 2
    changed = SOURCE.replace("return self.amount", "return -self.amount")
    again = {c.symbols[0]: c.id for c in units(changed) if c.symbols}
    assert again["shop.orders.Refund.issue"] != before["shop.orders.Refund.issue"].id
    assert again["shop.orders.total"] == before["shop.orders.total"].id


def test_a_long_definition_is_split_at_statements_with_its_signature_carried() -> None:
    body = "".join(f"    step_{i} = compute({i})\n" for i in range(50))
    nested = "    if ready:\n" + "".join(f"        more_{i} = compute({i})\n" for i in range(30))
    source = f"def long_job(ready):\n{body}{nested}    return step_0\n"
    parts = units(source, size=40)
    assert len(parts) >= 3
    assert all(p.end_line - p.start_line + 1 <= 40 for p in parts)
    assert parts[0].heading == "" and all(p.heading == "def long_job(ready)" for p in parts[1:])
    lines = split_lines(source)
    for part in parts[1:]:
        first = lines[part.start_line - 1]
        assert first.startswith(("    step_", "    if ", "        more_", "    return")), first
    assert parts[1].start_line <= 52  # the `if` opens a part of its own rather than being cut


_STATEMENT = st.sampled_from(
    ["x = 1", "y = f(x)", "# note", "", "return x", "pass", "z = [\n    1,\n]", 'text = """a\n\nb"""']
)


@st.composite
def modules(draw: st.DrawFn) -> str:
    out = [draw(st.sampled_from(['"""Doc."""', "import os", "", "# head"]))]
    for n in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["def", "class", "code", "blank"]))
        if kind == "def":
            body = draw(st.lists(_STATEMENT, min_size=1, max_size=40))
            out.append(
                f"def f{n}(a):\n"
                + "\n".join("    " + "\n    ".join(s.split("\n")) for s in body)
                + "\n    return a"
            )
        elif kind == "class":
            methods = draw(st.integers(0, 3))
            lines = [f"class C{n}:", '    """Doc."""', "    field = 1"]
            for m in range(methods):
                body = draw(st.lists(_STATEMENT, min_size=0, max_size=30))
                lines.append(f"    def m{m}(self):")
                lines.extend("        " + s for s in body if "\n" not in s)
                lines.append("        return self")
                lines.extend(draw(st.sampled_from([[], [""], ["    attr = 2"]])))
            out.append("\n".join(lines))
        elif kind == "code":
            out.append(draw(st.sampled_from(["X = 1", "if X:\n    X = 2", "print(X)"])))
        else:
            out.append("")
    return "\n".join(out) + "\n"


@settings(max_examples=60, deadline=None)
@given(modules(), st.integers(3, 50))
def test_every_line_is_in_exactly_one_unit_and_none_is_over_its_limit(source: str, size: int) -> None:
    chunks = units(source, size)
    lines = split_lines(source)
    covered: list[int] = []
    for chunk in chunks:
        covered.extend(range(chunk.start_line, chunk.end_line + 1))
        assert chunk.text == "".join(lines[chunk.start_line - 1 : chunk.end_line])
        content = chunk.end_line
        while content > chunk.start_line and not lines[content - 1].strip():
            content -= 1  # trailing blank lines do not count against the limit
        assert content - chunk.start_line + 1 <= size
    assert covered == list(range(1, len(lines) + 1))
    assert len({c.id for c in chunks}) == len(chunks)
    assert chunks == units(source, size)  # deterministic


def test_another_languages_definitions_are_units_with_their_comments_and_declarations_as_crumbs() -> None:
    from kbc.analyzers.code.analyze import analyze_code

    source = (
        'import { round } from "./money";\n'
        "\n"
        "/** A cart. */\n"
        "export class Cart {\n"
        "  // the lines, in order\n"
        "  add(price: number): void {\n"
        + "".join(f"    const step{i} = round(price * {i});\n" for i in range(45))
        + "    if (price > 0) {\n"
        + "".join(f"      this.total += step{i};\n" for i in range(20))
        + "    }\n"
        "  }\n"
        "}\n"
    )
    task = AnalysisTask("web/cart.ts", "", "web.cart", False, language="typescript")
    definitions = tuple(
        Definition(s.qname, s.name, s.kind, s.start_line, s.end_line, s.signature, s.is_async, "typescript")
        for s in analyze_code(source.encode(), task).symbols
    )
    parts = chunk_text(
        "web/cart.ts", source, "typescript", size=40, overlap=8, module="web.cart", definitions=definitions
    )
    assert [(p.start_line, p.unit, p.symbols) for p in parts[:3]] == [
        (1, "prelude", ()),
        (3, "class", ("web.cart.Cart",)),
        (5, "method", ("web.cart.Cart.add",)),
    ]
    assert parts[1].context == "add(price: number): void"  # the outline's member, as declared
    assert all(p.end_line - p.start_line + 1 <= 40 for p in parts)
    method = [p for p in parts if p.unit == "method"]
    assert len(method) >= 2 and all(p.heading.startswith("export class Cart") for p in method)
    assert method[1].heading.endswith("add(price: number): void")  # the later part carries its signature
    assert sum(p.end_line - p.start_line + 1 for p in parts) == len(split_lines(source))


def test_long_pieces_are_read_for_statements_alone_as_the_whole_file_reads_them() -> None:
    text = Path(definitions_module.__file__).read_text()
    lines = text.splitlines(keepends=True)
    whole = _statements(text)
    assert whole is not None
    defs = [n for n, line in enumerate(lines, start=1) if line.startswith("def ")]
    short = next(i for i in range(len(defs) - 1) if defs[i + 1] - defs[i] <= 30)
    a, b = defs[short], defs[short + 1]
    pieces = [Piece(1, a - 1, "module"), Piece(a, b - 1, "function"), Piece(b, len(lines), "module")]
    alone = _long_statements(lines, pieces, 30)
    assert alone == {n: c for n, c in whole.items() if n < a or n >= b}
    # a piece that does not tokenize on its own (it ends inside a bracket): the whole file's
    opened = ["x = f(\n", "    1,\n", "    2,\n", ")\n", "y = 3\n"]
    assert _long_statements(opened, [Piece(1, 2, "module"), Piece(3, 5, "module")], 1) == _statements(
        "".join(opened)
    )
