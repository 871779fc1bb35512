"""Whether a package runs as a program: a main-guarded block (or a ``__main__`` module) that
drives the package, not a demo of the one module it sits in.

A block **drives the package** when what it runs calls into another module of the product:
the block's own calls, or those of the function it runs first (``raise SystemExit(main())``
and ``main`` calling ``place_order`` of ``store.orders``). A ``__main__`` module's block
drives the package when it calls any definition of the product (``__main__`` calling
``cli.main``), guarded or not. Any other module's block drives it only when no other module of the product
imports that module: a module other modules import is a part of the library, and its block a
self-test of it. A block whose calls stay in its own module (``excutils``' ``math_lol``, a
``tableutils`` demo printing a table) is a demo, whatever its module imports.

A package with such a block is an application: its ``__main__`` blocks are its workflows,
unless its documents or its cut say it is used module by module
(:func:`kbc.views.context.library_modules`).
"""

from __future__ import annotations

from typing import Protocol

from kbc.domain.models import EntryPoint, FileFacts, GraphFacts, Symbol


class Context(Protocol):
    """What is read here of :class:`kbc.views.context.Context` (which reads this module)."""

    files: dict[str, FileFacts]
    graph: GraphFacts
    declared_entry_points: tuple[EntryPoint, ...]
    module_path: dict[str, str]
    symbols: dict[str, tuple[Symbol, str]]
    callees: dict[str, list[tuple[str, int, str]]]
    memo: dict[str, object]

    def role(self, path: str) -> str: ...

    def all_entry_points(self) -> list[EntryPoint]: ...


def _module_of(context: Context, qname: str) -> str:
    found = context.symbols.get(qname)
    if found is not None:
        return context.files[found[1]].module
    return qname if qname in context.module_path else ""


def _product(context: Context, module: str) -> bool:
    path = context.module_path.get(module)
    return path is not None and context.role(path) == "source"


def _first_calls(context: Context, entry: EntryPoint, module: str) -> list[str]:
    """What the block calls (the module's code from the guard on), and what the function it
    runs calls."""
    calls = [callee for callee, line, _ in context.callees.get(module, ()) if line >= entry.line]
    if entry.target != module and entry.target in context.symbols:
        calls += [callee for callee, _, _ in context.callees.get(entry.target, ())]
    return calls


def drives_package(context: Context, entry: EntryPoint) -> bool:
    """Whether a main-guarded block runs the package (see the module docstring)."""
    facts = context.files.get(entry.path)
    if entry.kind != "main_guard" or facts is None or not _product(context, facts.module):
        return False
    module = facts.module
    main = entry.path.endswith("__main__.py")
    if not main and any(
        edge.target == module and edge.source != module and _product(context, edge.source)
        for edge in context.graph.import_edges
    ):
        return False  # a part of the library others import: its block tests it
    for callee in _first_calls(context, entry, module):
        home = _module_of(context, callee)
        if home and _product(context, home) and (main or home != module):
            return True
    return False


def runs_as_program(context: Context) -> bool:
    """Whether a main-guarded block of the product drives its package (:func:`drives_package`),
    or a ``__main__`` module of it calls the product's code without a guard."""
    if any(drives_package(context, e) for e in context.all_entry_points()):
        return True
    return any(
        _product(context, home)
        for module in context.module_path
        if module.endswith(".__main__") and _product(context, module)
        for callee, _, _ in context.callees.get(module, ())
        if (home := _module_of(context, callee))
    )


SCRIPT_KINDS = ("main_guard", "argparse", "subcommand")


def command_packages(context: Context) -> frozenset[str]:
    """The top-level packages of the product whose code its declared commands run."""
    found = context.memo.get("command_packages")
    if isinstance(found, frozenset):
        return found
    tops = frozenset(
        top
        for e in context.declared_entry_points
        if e.kind in ("console_script", "gui_script")
        and (top := e.target.split(".")[0])
        and any(m == top or m.startswith(top + ".") for m in context.module_path)
    )
    context.memo["command_packages"] = tops
    return tops


def is_dev_script(context: Context, entry: EntryPoint) -> bool:
    """A tool's development script (``ci_tools/``, ``doc/tools``, ``scripts/``, a top-level
    ``bootstrap_dev.py``): a main-guarded block or argument parser outside every package the
    tool's declared commands run. A tool that declares no command has none."""
    if entry.kind not in SCRIPT_KINDS:
        return False
    homes = command_packages(context)
    facts = context.files.get(entry.path)
    return bool(homes) and facts is not None and facts.module.split(".")[0] not in homes
