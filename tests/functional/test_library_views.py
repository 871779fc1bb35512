"""Views of a library of independent modules: an empty ``__init__.py``, a README that names
its modules, demo blocks, a copy of another module's class, protocol-method guards, and a
changelog entry about a replaced function."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import RepoFactory

from kbc.domain.settings import Settings
from kbc.domain.views import View
from kbc.services.analyze import AnalyzeSummary, analyze_repository
from kbc.services.drift import find_drift
from kbc.services.views import build_views_pass

KIT = {
    "README.md": """
        # kit

        *kit: batteries.*

        [![build](https://ci.example/kit.svg)](https://ci.example/kit)

        Kit is a set of small, independent utility modules that the standard library lacks, including:

        - A least-recently-used cache, in `cacheutils`
        - Multi-valued dicts, in `dictutils`
    """,
    "CHANGELOG.md": """
        # Changelog

        ## 2.0

        - Replace deprecated `utcnow()` with `kit.timeutils.now_utc()`
        - Added `kit.strutils.slugify()`
        - Removed `kit.strutils.shout()`: use `kit.strutils.titlecase()`
    """,
    "kit/__init__.py": "",
    "kit/cacheutils.py": '''
        """`cacheutils` holds cache types that evict the least recently used entry."""
        from kit.dictutils import MultiDict


        class LRU:
            """A mapping that keeps its ``maxsize`` most recently used entries."""

            def __init__(self, maxsize=128):
                if maxsize <= 0:
                    raise ValueError("maxsize must be positive")
                self.maxsize = maxsize
                self._data = {}
                self._order = []

            def __len__(self):
                return len(self._data)

            def __eq__(self, other):
                if len(other) != len(self):
                    return False
                return self._data == other._data

            def get(self, key, default=None):
                """The value of ``key``, now the most recently used."""
                if key not in self._data:
                    return default
                self._touch(key)
                return self._data[key]

            def put(self, key, value):
                """Keep ``value`` under ``key``, evicting the oldest entry past the size."""
                self._data[key] = value
                self._touch(key)
                self._evict()

            def _touch(self, key):
                if key in self._order:
                    self._order.remove(key)
                self._order.append(key)

            def _evict(self):
                while len(self._order) > self.maxsize:
                    del self._data[self._order.pop(0)]


        def _make_key(args, kwargs):
            return (args, MultiDict(kwargs).freeze())


        def cached(func, *args, maxsize=128):
            """Call ``func`` with ``args`` through an ``LRU`` of its results."""
            cache = LRU(maxsize)
            key = _make_key(args, {})
            found = cache.get(key)
            if found is None:
                found = func(*args)
                cache.put(key, found)
            return found
    ''',
    "kit/dictutils.py": '''
        """`dictutils` holds dicts that keep every value given for a key."""


        class MultiDict(dict):
            """A dict that keeps every value of a key, oldest first."""

            def add(self, key, value):
                """Add ``value`` under ``key``."""
                self.setdefault(key, []).append(value)

            def getlist(self, key):
                """Every value of ``key``."""
                return list(self.get(key, []))

            def freeze(self):
                """The pairs as a hashable tuple."""
                return tuple(sorted(self.items()))
    ''',
    "kit/urlutils.py": '''
        """`urlutils` parses and builds URLs."""
        try:
            from kit.dictutils import MultiDict
        except ImportError:

            class MultiDict(dict):
                """A dict that keeps every value of a key, oldest first."""

                def add(self, key, value):
                    self.setdefault(key, []).append(value)

                def getlist(self, key):
                    return list(self.get(key, []))

                def freeze(self):
                    return tuple(sorted(self.items()))


        def parse_query(text):
            """The query string's pairs, every value of a key kept."""
            query = MultiDict()
            for pair in text.split("&"):
                key, _, value = pair.partition("=")
                query.add(key, value)
            return query
    ''',
    "kit/strutils.py": '''
        """`strutils` turns text into slugs and titles."""
        import re


        def slugify(text):
            """``text`` in lower case, words joined by dashes."""
            if not isinstance(text, str):
                raise TypeError("text must be a string")
            return "-".join(re.findall(r"\\w+", text.lower()))


        def titlecase(text):
            """Every word of ``text`` capitalised."""
            try:
                return " ".join(word.capitalize() for word in text.split())
            except AttributeError as exc:
                if text is None:
                    raise
                raise exc


        def _demo():
            print(slugify("Hello World"), titlecase("hello world"))


        if __name__ == "__main__":
            _demo()
    ''',
    "kit/timeutils.py": '''
        """`timeutils` reads and writes times in UTC."""
        import datetime
        import os


        def now_utc():
            """The current time, aware, in UTC (or in the zone ``KIT_TZ`` names)."""
            zone = os.environ.get("KIT_TZ")
            return datetime.datetime.now(datetime.timezone.utc) if not zone else None
    ''',
    "kit/eastereggs.py": '''
        """A module of jokes."""


        def gobs_program():
            """A pure-Python implementation of Gob's Algorithm."""
            while True:
                print("Penus", end=" ")


        if __name__ == "__main__":
            gobs_program()
    ''',
    "tests/test_kit.py": """
        import pytest

        from kit.cacheutils import LRU, cached
        from kit.strutils import slugify
        from kit.timeutils import now_utc


        def test_lru():
            cache = LRU(1)
            cache.put("a", 1)
            assert cache.get("a") == 1
            assert cached(len, "ab") == 2


        def test_text():
            assert slugify("A b") == "a-b"
            with pytest.raises(TypeError):
                slugify(1)
            assert now_utc()
    """,
}
PUBLIC = ("cacheutils", "dictutils", "eastereggs", "strutils", "timeutils", "urlutils")
README = "Kit is a set of small, independent utility modules that the standard library lacks"


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, AnalyzeSummary, dict[str, View]]:
    from helpers import repo_factory

    make: RepoFactory = repo_factory(tmp_path_factory.mktemp("kit"))
    root = make(KIT)
    summary = analyze_repository(root, Settings(workers=1))
    views, _ = build_views_pass(root / ".kbc", root, Settings(workers=1), no_llm=True)
    return root, summary, {v.id: v for v in views}


def test_every_public_module_has_a_module_view_of_its_own(
    kit: tuple[Path, AnalyzeSummary, dict[str, View]],
) -> None:
    _, _, views = kit
    for name in PUBLIC:
        assert views[f"module:kit.{name}"].facts["modules"] == [f"kit.{name}"]
    assert views["module:kit"].facts["modules"] == ["kit"]
    modules = {m["name"] for m in views["architecture"].facts["modules"]}
    assert {f"kit.{n}" for n in PUBLIC} | {"kit", "tests"} == modules
    assert (
        views["module:kit.cacheutils"].interpretation["purpose"].startswith("`cacheutils` holds cache types")
    )


def test_the_package_purpose_comes_from_its_readme_never_a_module(
    kit: tuple[Path, AnalyzeSummary, dict[str, View]],
) -> None:
    _, _, views = kit
    overview = views["architecture"].interpretation["overview"]
    assert overview.startswith(README) and "A least-recently-used cache, in `cacheutils`" in overview
    assert views["module:kit"].interpretation["purpose"] == overview
    assert "cache types" not in overview


def test_demo_blocks_are_examples_and_workflows_start_at_the_public_modules(
    kit: tuple[Path, AnalyzeSummary, dict[str, View]],
) -> None:
    _, _, views = kit
    entries = views["entry_points"].facts
    assert entries["entry_points"] == []
    assert {e["name"] for e in entries["examples"]} == {"kit.eastereggs", "kit.strutils"}
    workflows = {i: v.facts["entry_point"] for i, v in views.items() if i.startswith("workflow:")}
    assert workflows and all(e["kind"] == "public_api" for e in workflows.values())
    assert "workflow:kit.cacheutils.cached" in workflows
    assert not any("gobs" in i or "_demo" in i for i in workflows)


def test_features_are_the_public_modules_with_their_used_public_symbols(
    kit: tuple[Path, AnalyzeSummary, dict[str, View]],
) -> None:
    _, _, views = kit
    features = {i: v for i, v in views.items() if i.startswith("feature:")}
    cache = features["feature:kit.cacheutils"]
    assert [s["qname"] for s in cache.facts["symbols"]] == ["kit.cacheutils.LRU", "kit.cacheutils.cached"]
    assert cache.title == "Feature: kit.cacheutils (LRU, cached)"
    assert cache.interpretation["summary"].startswith("`cacheutils` holds cache types")
    shown = {s["qname"] for v in features.values() for s in v.facts["symbols"]}
    assert "kit.eastereggs.gobs_program" not in shown and "kit.strutils._demo" not in shown
    assert "kit.urlutils.MultiDict" not in shown  # a copy of kit.dictutils.MultiDict
    assert "kit.dictutils.MultiDict" in shown
    table = {s["qname"] for s in views["module:kit.urlutils"].facts["symbols"]}
    assert "kit.urlutils.parse_query" in table and "kit.urlutils.MultiDict" not in table


def test_business_rules_leave_out_protocol_guards_type_checks_and_reraises(
    kit: tuple[Path, AnalyzeSummary, dict[str, View]],
) -> None:
    _, _, views = kit
    rules = [r for i, v in views.items() if i.startswith("business_rules:") for r in v.facts["rules"]]
    conditions = {(r["symbol"], r["condition"]) for r in rules}
    assert ("kit.cacheutils.LRU.__init__", "maxsize <= 0") in conditions
    assert not any(symbol.endswith("__eq__") for symbol, _ in conditions)
    assert not any("isinstance" in condition for _, condition in conditions)
    assert not any(symbol == "kit.strutils.titlecase" for symbol, _ in conditions)


def test_the_build_summary_counts_the_integrations_the_views_list(
    kit: tuple[Path, AnalyzeSummary, dict[str, View]],
) -> None:
    _, summary, views = kit
    listed = [(i["kind"], i["name"]) for i in views["integrations"].facts["integrations"]]
    assert listed == [("env_var", "KIT_TZ")]
    assert summary.integrations == len(listed) == len(views["architecture"].facts["integrations"])
    assert summary.integrations_elsewhere == 1  # pytest, in the tests


def test_a_changelog_naming_what_it_says_was_replaced_is_not_behind(
    kit: tuple[Path, AnalyzeSummary, dict[str, View]],
) -> None:
    root, _, _ = kit
    reports = {r.path: r for r in find_drift(root, root / ".kbc")}
    assert "CHANGELOG.md" not in reports
    changed = root / "CHANGELOG.md"
    changed.write_text(changed.read_text() + "- Added `kit.strutils.truncate()`\n")
    reports = {r.path: r for r in find_drift(root, root / ".kbc")}
    assert [reason.names for reason in reports["CHANGELOG.md"].reasons] == [("kit.strutils.truncate()",)]
