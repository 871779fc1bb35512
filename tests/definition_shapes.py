"""A Python module with every shape of definition the facts read (for the tests that compare
the definitions ``ast`` reads with libcst's)."""

from __future__ import annotations

import textwrap

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
        else:
            def guarded(self): ...

    def commented_tail():
        return 1
    # at column 0, before a comment indented as the body: the body's too
        # indented as the body

    after = 2

    # at column 0: owned by what follows
    def late(): return "é" + "ü"  # non-ASCII before the end
    def unicode_defaults(name="naïve", other=lambda: (1, 2)): ...
    match = 1
    '''
)
