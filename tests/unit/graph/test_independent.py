"""A package whose modules barely link is cut into one part per public module."""

from __future__ import annotations

from kbc.domain.models import ModuleGroup
from kbc.graph.independent import independent_parts


def _group(*names: str) -> tuple[ModuleGroup, dict[str, str]]:
    modules = ("pkg", *(f"pkg.{n}" for n in names))
    path_of = {m: ("pkg/__init__.py" if m == "pkg" else m.replace(".", "/") + ".py") for m in modules}
    return ModuleGroup("pkg", tuple(sorted(modules)), tuple(sorted(path_of.values()))), path_of


def test_modules_linked_only_through_a_shared_helper_are_parts_of_their_own() -> None:
    names = ("cacheutils", "dictutils", "iterutils", "strutils", "typeutils", "tbutils", "tbutils_parsed")
    group, path_of = _group(*names, "_compat")
    links = {(f"pkg.{n}", "pkg.typeutils"): 1 for n in ("cacheutils", "dictutils", "iterutils", "strutils")}
    links[("pkg._compat", "pkg.strutils")] = 2  # a private helper of one module goes with it
    parts = independent_parts(group, links, set(links), path_of, "pkg")
    assert parts is not None
    assert {p.name: p.modules for p in parts} == {
        "pkg": ("pkg",),
        "pkg.cacheutils": ("pkg.cacheutils",),
        "pkg.dictutils": ("pkg.dictutils",),
        "pkg.iterutils": ("pkg.iterutils",),
        "pkg.strutils": ("pkg._compat", "pkg.strutils"),
        "pkg.typeutils": ("pkg.typeutils",),
        "pkg[tbutils]": ("pkg.tbutils", "pkg.tbutils_parsed"),  # one topic by name
    }
    assert next(p for p in parts if p.name == "pkg.strutils").files == ("pkg/_compat.py", "pkg/strutils.py")


def test_modules_that_call_each_other_are_left_to_the_components() -> None:
    group, path_of = _group("cli", "orders", "models", "payments")
    links = {("pkg.cli", "pkg.orders"): 2, ("pkg.models", "pkg.orders"): 3, ("pkg.orders", "pkg.payments"): 1}
    assert independent_parts(group, links, set(links), path_of, "pkg") is None
    few, few_paths = _group("a", "b")
    assert independent_parts(few, {}, set(), few_paths, "pkg") is None  # too few public modules
