"""Views of a flat library: components found in its file graph, workflows from its public API,
its demo blocks listed as examples, import cycles with the imports that close them, and names
such as ``__init__`` printed as written."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import RepoFactory, analyze_repo

from kbc.domain.settings import Settings
from kbc.domain.views import View
from kbc.services.views import build_views_pass
from kbc.views.render import render_all

# Three parts of one flat package, each a chain of modules that import and call each other, with
# a thin link between parts; every module has a demo block, as rich's do.
PARTS = {
    "render": ("console", "segment", "measure", "cells", "_wrap"),
    "style": ("color", "palette", "theme", "_palettes"),
    "live": ("progress", "spinner", "status", "_timer"),
}


def _module(part: str, name: str, after: str | None) -> str:
    step = after.lstrip("_") if after else ""
    head = f"from lib.{after} import {step}_step\n" if after else ""
    call = f"    return {step}_step(x) + 1\n" if after else "    return x\n"
    return (
        f'"""The {name} module of the {part} part."""\n{head}\n\n'
        f'def {name.lstrip("_")}_step(x):\n    """One step of {name}."""\n{call}\n\n'
        f'class {name.strip("_").title()}:\n    """A {name}."""\n\n'
        f"    def run(self, x):\n        return {name.lstrip('_')}_step(x)\n\n\n"
        f'if __name__ == "__main__":\n    print({name.lstrip("_")}_step(1))\n'
    )


def _library() -> dict[str, str]:
    files = {
        "lib/__init__.py": (
            '"""A flat library."""\nfrom lib.console import Console\n'
            "from lib.progress import Progress\n\n__all__ = ['Console', 'Progress']\n"
        ),
        "lib/__main__.py": (
            "from lib.console import Console\n\nif __name__ == '__main__':\n    Console().run(1)\n"
        ),
        "tests/test_lib.py": ("from lib import Console\n\n\ndef test_run():\n    assert Console().run(1)\n"),
    }
    for part, names in PARTS.items():
        for name, after in zip(names, (*names[1:], None), strict=True):
            files[f"lib/{name}.py"] = _module(part, name, after)
    # thin links between parts, and a cycle: the core reaching back into its periphery
    files["lib/progress.py"] += "\nfrom lib.console import Console\n"
    files["lib/theme.py"] += "\nfrom lib.segment import segment_step\n"
    files["lib/cells.py"] += "\nimport lib.console\n"
    return files


def _views(root: Path) -> dict[str, View]:
    analyze_repo(root)
    views, _ = build_views_pass(root / ".kbc", root, Settings(workers=1), no_llm=True)
    return {v.id: v for v in views}


def test_a_flat_library_gets_components_api_workflows_and_examples(make_repo: RepoFactory) -> None:
    root = make_repo(_library())
    views = _views(root)
    components = {i[len("module:") :]: views[i].facts["modules"] for i in views if i.startswith("module:lib")}
    assert len(components) >= 3 and all(re.fullmatch(r"lib\[\w+\]", name) for name in components), components
    for name, members in components.items():
        assert len(members) >= 3 and f"lib.{name[4:-1]}" in members  # named by one of its modules
    for part in ("style", "live"):
        together = [m for m in components.values() if {f"lib.{n}" for n in PARTS[part]} <= set(m)]
        assert together, (part, components)
    console = next(name for name, members in components.items() if "lib.console" in members)
    assert views[f"module:{console}"].title.startswith(f"Component {console}: ")
    architecture = views["architecture"].facts
    assert {m["name"] for m in architecture["modules"]} == {*components, "tests"}
    assert (
        len(
            {
                (d["source"], d["target"])
                for d in architecture["dependencies"]
                if d["source"] in components and d["target"] in components
            }
        )
        >= 2
    )
    assert views["module:tests"].facts["modules"] == ["tests.test_lib"]  # tests are not cut

    entries = views["entry_points"].facts
    assert [e["name"] for e in entries["entry_points"]] == ["lib.__main__"]
    demos = {f"lib.{n}" for names in PARTS.values() for n in names}
    assert {e["name"] for e in entries["examples"]} == demos
    workflows = [v for i, v in views.items() if i.startswith("workflow:")]
    assert workflows and all(v.facts["entry_point"]["kind"] == "public_api" for v in workflows)

    cycles = architecture["import_cycles"]
    assert len(cycles) == 1 and "lib.console" in cycles[0]["modules"] and "lib.cells" in cycles[0]["modules"]
    assert cycles[0]["closing"] == len(cycles[0]["closed_by"]) == 1
    assert cycles[0]["closed_by"][0]["location"].startswith("lib/")

    again = _views(root)
    assert [(v.id, v.facts) for v in again.values()] == [(v.id, v.facts) for v in views.values()]


def test_names_and_paths_print_as_written(make_repo: RepoFactory) -> None:
    """No path, name or docstring is read as emphasis: every page parsed as CommonMark shows
    ``lib/__init__.py`` and ``_wrap`` as written, and the only emphasis is the templates' own."""
    from markdown_it import MarkdownIt

    files = _library()
    files["lib/console.py"] += '\n\ndef dunder():\n    """Calls __init__ and *args, see lib/__init__.py."""\n'
    root = make_repo(files)
    pages = render_all(list(_views(root).values()), "lib", "0" * 40)
    parser = MarkdownIt("commonmark").enable("table")
    shown = ""
    for name, text in pages.items():
        html = parser.render(text)
        assert "<strong>" not in html, name
        for emphasised in re.findall(r"<em>(.*?)</em>", html):
            note = re.fullmatch(r"(No|None) [a-z ]+\.|\d+ more \w+ not shown\.", emphasised)
            assert note, (name, emphasised)
        shown += html
    assert "lib/__init__.py" in shown and "lib/_wrap.py" in shown and "*args" in shown


def test_a_package_whose_all_names_submodules_exports_what_they_export(make_repo: RepoFactory) -> None:
    """dateutil's ``__all__`` names its submodules (``parser``, ``tz``): their exports are its
    public API, its workflows start there, and a maintenance script's main guard is an example."""
    steps = "".join(f"\n\ndef _step{i}(text):\n    return _step{i + 1}(text)\n" for i in range(5))
    root = make_repo(
        {
            "dates/__init__.py": '"""Dates."""\n__all__ = ["parser"]\n',
            "dates/parser.py": (
                '"""Parsing."""\n__all__ = ["parse"]\n\n\ndef parse(text):\n'
                '    """Parse a date."""\n    return _step0(text)\n'
                + steps
                + "\n\ndef _step5(text):\n    return text\n"
            ),
            "update_zones.py": (
                "from dates.parser import parse\n\nif __name__ == '__main__':\n    parse('x')\n"
            ),
        }
    )
    views = _views(root)
    workflows = [v.facts["entry_point"] for i, v in views.items() if i.startswith("workflow:")]
    assert [(e["kind"], e["name"], e["target"]) for e in workflows] == [
        ("public_api", "dates.parser.parse", "dates.parser.parse")
    ]
    entries = views["entry_points"].facts
    assert entries["entry_points"] == [] and [e["name"] for e in entries["examples"]] == ["update_zones"]
