"""Imports: absolute, relative, aliased and star imports, as bindings and records."""

from helpers import facts_of, targets


def test_relative_import_resolves_against_the_package() -> None:
    facts = facts_of(
        """
        from . import util
        from .util import helper
        from ..core import engine
    """,
        module="pkg.sub.mod",
        path="pkg/sub/mod.py",
    )
    assert [(i.module, i.name, i.level) for i in facts.imports] == [
        ("pkg.sub", "util", 1),
        ("pkg.sub.util", "helper", 1),
        ("pkg.core", "engine", 2),
    ]


def test_relative_import_inside_a_package_init_starts_at_the_package() -> None:
    facts = facts_of("from .core import run\n", module="pkg", path="pkg/__init__.py", is_package=True)
    assert facts.imports[0].module == "pkg.core"


def test_relative_import_above_the_top_package_is_unresolved() -> None:
    facts = facts_of("from ... import nothing\n", module="pkg.mod")
    assert facts.imports[0].module == ""


def test_star_import_is_recorded_with_its_module() -> None:
    facts = facts_of("from .shapes import *\n", module="pkg.mod")
    (imp,) = facts.imports
    assert (imp.module, imp.name, imp.alias) == ("pkg.shapes", "*", "")


def test_module_alias_names_the_call_target() -> None:
    facts = facts_of("""
        import numpy as np
        import os.path
        np.array([1])
        os.path.join("a", "b")
    """)
    assert targets(facts) == {"np.array": "numpy.array", "os.path.join": "os.path.join"}


def test_from_import_alias_names_the_call_target() -> None:
    facts = facts_of("""
        from pkg.util import helper as h
        h()
    """)
    assert targets(facts) == {"h": "pkg.util.helper"}


def test_imports_inside_functions_bind_locally() -> None:
    facts = facts_of("""
        def run():
            from json import dumps
            return dumps({})

        def other():
            return dumps({})
    """)
    calls = {(c.caller, c.text): c.target for c in facts.calls}
    assert calls[("pkg.mod.run", "dumps")] == "json.dumps"
    assert calls[("pkg.mod.other", "dumps")] == ""
