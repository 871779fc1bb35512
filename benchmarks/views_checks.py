"""Checks of one package's views that can fail, read from its sources and its view documents
(``benchmarks/views_corpus.py`` runs them on every package it builds):

- ``purpose``: the package's purpose (the architecture's overview, and the purpose of the module
  view of the package itself) is stated, and is not the docstring of one of its modules or
  subpackages (unless the package's own docstring says the same);
- ``demo``: no workflow starts at an ``if __name__ == "__main__":`` block of a module other
  than a ``__main__`` (a command's argument parser may start one);
- ``modules``: every public module (in the main package, no dotted part private, not a
  ``__main__`` nor a test, defining a public top-level class or function) has a module view of its own:
  the view that holds it holds no other public module but those of its own subpackage or topic
  (one's name followed by ``_`` begins the other's);
- ``integrations``: the build summary's count of integrations is the integrations view's
  (listed and omitted), and the architecture lists as many (up to its cap of 60).

Modules are read with ``ast``, so the checks do not depend on the facts they judge.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from kbc.analyzers.docstrings import summary

ARCHITECTURE_CAP = 60  # kbc/views/context.py MAX_LIST


def _modules(tree: Path, tracked: set[str], package: str) -> dict[str, ast.Module]:
    """The main package's Python modules, by dotted name (a ``src/`` layout read through)."""
    found: dict[str, ast.Module] = {}
    for path in sorted(tracked):
        if not path.endswith(".py"):
            continue
        parts = path[:-3].split("/")
        if parts[0] == "src":
            parts = parts[1:]
        if not parts or parts[0] != package:
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if any(p in ("test", "tests", "testing") or p.startswith("test_") for p in parts):
            continue  # the package's own tests
        try:
            found[".".join(parts)] = ast.parse((tree / path).read_bytes())
        except (SyntaxError, ValueError, OSError):
            continue
    return found


def _public(module: str, node: ast.Module) -> bool:
    if "." not in module or any(p.startswith("_") for p in module.split(".")):
        return False
    return any(
        isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not d.name.startswith("_")
        for d in node.body
    )


def _own(module: str, other: str, package: str) -> bool:
    """Whether ``other`` may share ``module``'s view: one subpackage, or one topic by name."""
    a, b = module[len(package) + 1 :].split("."), other[len(package) + 1 :].split(".")
    if a[0] == b[0] and max(len(a), len(b)) > 1:
        return True
    x, y = sorted((a[-1], b[-1]), key=len)
    return y.startswith(x + "_")


def _has_main_guard(node: ast.Module) -> bool:
    for statement in node.body:
        test = statement.test if isinstance(statement, ast.If) else None
        if isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__":
            return True
    return False


def checks(
    views: list[dict[str, Any]], tree: Path, tracked: set[str], build_summary: dict[str, Any]
) -> dict[str, Any]:
    """Each check's verdict (True: passed) and what it found."""
    by_id = {v.get("id", ""): v for v in views}
    architecture = by_id.get("architecture", {})
    package = architecture.get("facts", {}).get("repository", "")
    modules = _modules(tree, tracked, package)
    own_doc = summary(ast.get_docstring(modules[package])) if package in modules else ""
    module_docs = {
        d
        for m, node in modules.items()
        if m != package and (d := summary(ast.get_docstring(node))) and d != own_doc
    }
    overview = architecture.get("interpretation", {}).get("overview", "")
    own_view = by_id.get(f"module:{package}", {})
    own_purpose = own_view.get("interpretation", {}).get("purpose", "") if own_view else overview
    purpose_ok = bool(overview) and overview not in module_docs and own_purpose not in module_docs

    demo = [
        v["id"]
        for v in views
        if v.get("kind") == "workflow"
        and (entry := v.get("facts", {}).get("entry_point", {})).get("kind") == "main_guard"
        and not entry.get("location", "").split(":")[0].endswith("__main__.py")
    ]
    guarded = sum(_has_main_guard(node) for m, node in modules.items() if not m.endswith("__main__"))

    public = sorted(m for m, node in modules.items() if _public(m, node))
    view_of = {
        m: v["facts"]["modules"]
        for v in views
        if v.get("kind") == "module"
        for m in v.get("facts", {}).get("modules", [])
    }
    alone = [
        m
        for m in public
        if m in view_of and all(o == m or o not in public or _own(m, o, package) for o in view_of[m])
    ]

    listed = by_id.get("integrations", {}).get("facts", {})
    in_view = len(listed.get("integrations", [])) + int(listed.get("omitted", 0))
    in_architecture = len(architecture.get("facts", {}).get("integrations", []))
    counted = build_summary.get("analyze", {}).get("integrations")
    integrations_ok = counted == in_view and in_architecture == min(in_view, ARCHITECTURE_CAP)

    return {
        "purpose": purpose_ok,
        "purpose_text": (overview or own_purpose)[:120],
        "demo": not demo,
        "demo_workflows": demo,
        "main_guards": guarded,
        "modules": len(alone) == len(public),
        "public_modules": len(public),
        "public_modules_alone": len(alone),
        "integrations": integrations_ok,
        "integrations_counted": f"{counted} / {in_view} / {in_architecture}",
    }


CHECKS = ("purpose", "demo", "modules", "integrations", "subcommands")


def failed(result: dict[str, Any]) -> list[str]:
    """The checks that failed; one not asked of the package (None, or absent for
    ``subcommands``) is not."""
    asked = [n for n in CHECKS if n in result and result[n] is not None]
    return [name for name in asked if not result[name]]
