"""Symbols: qualified names, kinds, spans, signatures, decorators, docstrings, visibility."""

from helpers import facts_of


def by_name(source: str, **kwargs: object) -> dict:  # type: ignore[type-arg]
    return {s.qname: s for s in facts_of(source, **kwargs).symbols}  # type: ignore[arg-type]


def test_decorators_are_recorded_and_start_the_span() -> None:
    symbols = by_name("""
        import functools


        @functools.lru_cache(
            maxsize=8,
        )
        @staticmethod
        def cached(x):
            return x
    """)
    symbol = symbols["pkg.mod.cached"]
    assert symbol.decorators == ("functools.lru_cache( maxsize=8, )", "staticmethod")
    assert (symbol.start_line, symbol.end_line) == (4, 9)


def test_nested_classes_get_qualified_names_and_parents() -> None:
    symbols = by_name("""
        class Outer:
            class Inner:
                def method(self):
                    pass
    """)
    assert symbols["pkg.mod.Outer.Inner"].parent == "pkg.mod.Outer"
    assert symbols["pkg.mod.Outer.Inner"].kind == "class"
    method = symbols["pkg.mod.Outer.Inner.method"]
    assert (method.kind, method.parent, method.start_line, method.end_line) == (
        "method",
        "pkg.mod.Outer.Inner",
        3,
        4,
    )


def test_nested_functions_are_private_and_spanned() -> None:
    symbols = by_name("""
        def outer():
            def inner():
                return 1
            # a comment in the body
            return inner()
        x = 1
    """)
    assert symbols["pkg.mod.outer"].end_line == 5
    inner = symbols["pkg.mod.outer.inner"]
    assert (inner.kind, inner.public, inner.start_line, inner.end_line) == ("function", False, 2, 3)


def test_span_ends_at_the_last_line_of_a_multiline_string() -> None:
    symbols = by_name('''
        def text():
            return """
        line one
        line two
        """


        def after():
            pass
    ''')
    assert (symbols["pkg.mod.text"].start_line, symbols["pkg.mod.text"].end_line) == (1, 5)
    assert symbols["pkg.mod.after"].start_line == 8


def test_signature_holds_parameters_and_return_annotation() -> None:
    symbols = by_name("""
        async def fetch(url: str, *, retries: int = 3,
                        **options) -> bytes:
            ...
    """)
    symbol = symbols["pkg.mod.fetch"]
    assert symbol.signature == "(url: str, *, retries: int = 3, **options) -> bytes"
    assert symbol.is_async


def test_class_signature_and_bases_resolve_through_imports() -> None:
    symbols = by_name("""
        from collections import abc
        from .base import Model as BaseModel

        class User(BaseModel[int], abc.Mapping, metaclass=Meta):
            pass
    """)
    user = symbols["pkg.mod.User"]
    assert user.signature == "(BaseModel[int], abc.Mapping, metaclass=Meta)"
    assert user.bases == ("pkg.base.Model", "collections.abc.Mapping")


def test_docstring_summary_is_the_first_paragraph() -> None:
    symbols = by_name('''
        class Account:
            """Holds a balance
            and an owner.

            Details nobody reads.
            """
    ''')
    assert symbols["pkg.mod.Account"].doc == "Holds a balance and an owner."


def test_privacy_follows_underscores_and_dunders() -> None:
    symbols = by_name("""
        class _Hidden:
            def visible(self): ...

        class Shown:
            def _helper(self): ...
            def __init__(self): ...
    """)
    assert not symbols["pkg.mod._Hidden"].public
    assert not symbols["pkg.mod._Hidden.visible"].public
    assert symbols["pkg.mod.Shown"].public
    assert not symbols["pkg.mod.Shown._helper"].public
    assert symbols["pkg.mod.Shown.__init__"].public


def test_dunder_all_decides_module_level_visibility() -> None:
    facts = facts_of("""
        __all__ = ["exported"]
        def exported(): ...
        def not_listed(): ...
    """)
    public = {s.name: s.public for s in facts.symbols}
    assert facts.exports == ("exported",)
    assert public == {"exported": True, "not_listed": False}


def test_module_docstring_is_summarised() -> None:
    assert facts_of('"""Billing rules.\n\nMore."""\n').doc == "Billing rules."


def test_an_overloaded_function_is_its_implementation_not_its_stubs() -> None:
    facts = facts_of('''
        import typing as t
        from typing import overload

        class Command:
            @t.overload
            def main(self, args: None) -> None: ...
            @t.overload
            def main(self, args: list[str]) -> int: ...
            def main(self, args=None):
                """Run the command."""
                return 0

        @overload
        def only_declared(x: int) -> int: ...
    ''')
    spans = [(s.qname, s.start_line, s.end_line, s.doc) for s in facts.symbols]
    assert spans == [
        ("pkg.mod.Command", 4, 11, ""),
        ("pkg.mod.Command.main", 9, 11, "Run the command."),
        ("pkg.mod.only_declared", 13, 14, ""),
    ]
