"""graph: import and call graphs across files, metrics, cycles."""

import pytest
from helpers import RepoFactory, analyze_repo

from kbc.domain.models import GraphFacts


def graph_of(make_repo: RepoFactory, files: dict[str, str]) -> GraphFacts:
    return analyze_repo(make_repo(files)).graph()


def test_import_edges_and_cycles(make_repo: RepoFactory) -> None:
    graph = graph_of(
        make_repo,
        {
            "app/__init__.py": "",
            "app/a.py": "from app import b\n",
            "app/b.py": "from . import a\nimport app.c\n",
            "app/c.py": "import os\n",
        },
    )
    assert [(e.source, e.target, e.lines) for e in graph.import_edges] == [
        ("app.a", "app.b", (1,)),
        ("app.b", "app.a", (1,)),
        ("app.b", "app.c", (2,)),
    ]
    assert graph.import_cycles == (("app.a", "app.b"),)
    metrics = {m.id: m for m in graph.modules}
    assert (metrics["app.b"].fan_in, metrics["app.b"].fan_out) == (1, 2)
    assert metrics["app.c"].pagerank > metrics["app"].pagerank
    assert abs(sum(m.pagerank for m in graph.modules) - 1.0) < 1e-6


def test_calls_follow_reexports_to_the_definition(make_repo: RepoFactory) -> None:
    graph = graph_of(
        make_repo,
        {
            "app/__init__.py": "from app.core import run\n",
            "app/core.py": "def run(): ...\n",
            "app/cli.py": "import app\ndef main():\n    app.run()\n",
        },
    )
    assert [(e.source, e.target, e.lines, e.path) for e in graph.call_edges] == [
        ("app.cli.main", "app.core.run", (3,), "app/cli.py")
    ]


def test_calls_through_self_reach_methods_of_base_classes(make_repo: RepoFactory) -> None:
    graph = graph_of(
        make_repo,
        {
            "app/__init__.py": "",
            "app/base.py": "class Base:\n    def save(self): ...\n",
            "app/repo.py": (
                "from app.base import Base\nclass Repo(Base):\n    def run(self):\n        self.save()\n"
            ),
        },
    )
    assert [(e.source, e.target) for e in graph.call_edges] == [("app.repo.Repo.run", "app.base.Base.save")]


def test_calls_resolve_through_star_imports(make_repo: RepoFactory) -> None:
    graph = graph_of(
        make_repo,
        {
            "app/__init__.py": "",
            "app/shapes.py": "def area(): ...\n",
            "app/use.py": "from app.shapes import *\ndef total():\n    return area()\n",
        },
    )
    assert [(e.source, e.target) for e in graph.call_edges] == [("app.use.total", "app.shapes.area")]


def test_recursion_is_a_call_cycle_and_constructors_are_edges(make_repo: RepoFactory) -> None:
    graph = graph_of(make_repo, {"m.py": ("class Node: ...\ndef walk(n):\n    Node()\n    return walk(n)\n")})
    assert {(e.source, e.target) for e in graph.call_edges} == {("m.walk", "m.Node"), ("m.walk", "m.walk")}
    assert graph.call_cycles == (("m.walk",),)
    assert {m.id: m.fan_in for m in graph.symbols}["m.walk"] == 1


def test_external_distributions_are_counted_by_importing_modules(make_repo: RepoFactory) -> None:
    graph = graph_of(make_repo, {"a.py": "import yaml\nimport requests\n", "b.py": "import yaml\n"})
    assert graph.external == (("PyYAML", 2), ("requests", 1))


@pytest.mark.slow
def test_a_star_import_chain_of_five_hundred_modules_resolves_to_its_end(make_repo: RepoFactory) -> None:
    depth = 500
    files = {
        "app/__init__.py": "from app.m0 import *\n",
        "app/use.py": "from app import *\ndef main():\n    return last()\n",
    }
    for i in range(depth):
        files[f"app/m{i}.py"] = f"from app.m{i + 1} import *\n" if i < depth - 1 else "def last(): ...\n"
    graph = graph_of(make_repo, files)
    assert [(e.source, e.target) for e in graph.call_edges] == [("app.use.main", f"app.m{depth - 1}.last")]


def test_a_star_import_cycle_resolves_what_it_defines_and_ends_on_what_it_does_not(
    make_repo: RepoFactory,
) -> None:
    graph = graph_of(
        make_repo,
        {
            "app/__init__.py": "",
            "app/a.py": "from app.b import *\ndef here(): ...\n",
            "app/b.py": "from app.c import *\n",
            "app/c.py": "from app.a import *\n",
            "app/use.py": "from app.c import *\ndef main():\n    here()\n    nowhere()\n",
        },
    )
    assert [(e.source, e.target) for e in graph.call_edges] == [("app.use.main", "app.a.here")]


def test_a_binding_that_names_itself_ends_unresolved_instead_of_growing_forever(
    make_repo: RepoFactory,
) -> None:
    graph = graph_of(
        make_repo,
        {
            "app/__init__.py": "",
            "app/m.py": "from app.m.x import y as x\n\ndef here(): ...\n\ndef run():\n    x()\n    here()\n",
        },
    )
    assert [(e.source, e.target) for e in graph.call_edges] == [("app.m.run", "app.m.here")]


def test_a_call_on_what_a_function_returns_resolves_through_its_return_annotation(
    make_repo: RepoFactory,
) -> None:
    graph = graph_of(
        make_repo,
        {
            "net/__init__.py": "",
            "net/adapters.py": (
                "class BaseAdapter:\n"
                "    def send(self, request): ...\n"
                "class HTTPAdapter(BaseAdapter):\n"
                "    def send(self, request):\n"
                "        return request\n"
            ),
            "net/sessions.py": (
                "from typing import Optional\n"
                "from net.adapters import BaseAdapter, HTTPAdapter\n"
                "class Session:\n"
                "    def get_adapter(self, url) -> Optional['BaseAdapter']:\n"
                "        return HTTPAdapter()\n"
                "    def plain(self): \n"
                "        return 1\n"
                "    def send(self, request):\n"
                "        adapter = self.get_adapter(request)\n"
                "        value = self.plain()\n"
                "        value.bit_length()\n"
                "        return adapter.send(request)\n"
            ),
        },
    )
    edges = {(e.source, e.target) for e in graph.call_edges if e.source == "net.sessions.Session.send"}
    assert edges == {
        ("net.sessions.Session.send", "net.sessions.Session.get_adapter"),
        ("net.sessions.Session.send", "net.sessions.Session.plain"),
        ("net.sessions.Session.send", "net.adapters.BaseAdapter.send"),
    }


def test_a_method_is_overridden_by_the_methods_of_its_subclasses(make_repo: RepoFactory) -> None:
    from kbc.graph.symbols import SymbolTable

    root = make_repo(
        {
            "shapes.py": (
                "class Shape:\n    def area(self): ...\n    def __init__(self): ...\n"
                "class Square(Shape):\n    def area(self): return 1\n    def __init__(self): ...\n"
                "class Tile(Square):\n    def area(self): return 2\n"
            )
        }
    )
    table = SymbolTable(analyze_repo(root).facts())
    assert table.overriding() == {
        "shapes.Shape.area": ["shapes.Square.area"],
        "shapes.Square.area": ["shapes.Tile.area"],
    }
    assert table.returns("shapes.Shape.area") is None


def test_import_cycles_are_those_of_imports_made_when_a_module_is_imported(make_repo: RepoFactory) -> None:
    """An import in a function, under ``if TYPE_CHECKING:`` or in a main guard runs later or
    never: it makes no import cycle (rich's 53 modules "in one cycle" had none at import time)."""
    graph = graph_of(
        make_repo,
        {
            "app/__init__.py": "",
            "app/a.py": "from app import b\nimport app.c\n",
            "app/b.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from app.a import A\n"
                "def late():\n    from app import a\n    return a\n"
                "if __name__ == '__main__':\n    import app.a\n"
            ),
            "app/c.py": "import typing\nif typing.TYPE_CHECKING:\n    pass\nelse:\n    import app.a\n",
        },
    )
    assert graph.deferred_imports == (("app.b", "app.a"),)
    assert graph.import_cycles == (("app.a", "app.c"),)  # c's import in the else branch runs
    assert {(e.source, e.target) for e in graph.import_edges} >= {("app.b", "app.a"), ("app.a", "app.b")}
