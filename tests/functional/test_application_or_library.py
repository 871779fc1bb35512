"""A package without exports whose modules are documented: an application when a main-guarded
block drives it, a library when its blocks are demos of their own module or its docs import
its modules."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import RepoFactory

from kbc.domain.settings import Settings
from kbc.domain.views import View
from kbc.services.analyze import analyze_repository
from kbc.services.views import build_views_pass

SHOP = {
    "README.md": """
        # shop

        A small shop that prices its stock and prints a report of it, from the command line.
        The prices live in `prices`, the stock in `stock`.
    """,
    "shop/__init__.py": "",
    "shop/prices.py": '''
        """Prices of the shop's items."""

        PRICES = {"apple": 3, "pear": 4}


        def price(item: str) -> int:
            """The price of one item."""
            return PRICES.get(item, 0)
    ''',
    "shop/stock.py": '''
        """What the shop holds."""

        from shop.prices import price


        def stock_value(items: dict[str, int]) -> int:
            """What the held items are worth."""
            return sum(price(item) * count for item, count in items.items())
    ''',
    "shop/report.py": '''
        """The report of the shop's stock."""

        import sys

        from shop.stock import stock_value


        def main() -> int:
            """Print what the stock named on the command line is worth."""
            print(stock_value({name: 1 for name in sys.argv[1:]}))
            return 0


        if __name__ == "__main__":
            raise SystemExit(main())
    ''',
}
DEMO = '''
    """Prices of the shop's items."""

    PRICES = {"apple": 3, "pear": 4}


    def price(item: str) -> int:
        """The price of one item."""
        return PRICES.get(item, 0)


    if __name__ == "__main__":
        print(price("apple"))
'''
GUIDE = """
    # Using shop

        from shop import stock
        stock.stock_value({"apple": 2})
"""


def _views(make: RepoFactory, files: dict[str, str]) -> dict[str, View]:
    root: Path = make(files)
    analyze_repository(root, Settings(workers=1))
    views, _ = build_views_pass(root / ".kbc", root, Settings(workers=1), no_llm=True)
    return {v.id: v for v in views}


@pytest.fixture
def make(tmp_path: Path) -> RepoFactory:
    from helpers import repo_factory

    return repo_factory(tmp_path)


def test_a_block_that_drives_the_package_makes_it_an_application(make: RepoFactory) -> None:
    views = _views(make, SHOP)
    entries = views["entry_points"].facts
    assert [e["target"] for e in entries["entry_points"]] == ["shop.report.main"]
    assert "examples" not in entries
    flow = views["workflow:shop.report.main"].facts
    assert flow["entry_point"]["kind"] == "main_guard"
    assert "shop.prices.price" in {s["symbol"] for s in flow["steps"]}


def test_blocks_that_demo_their_own_module_are_examples_of_a_library(make: RepoFactory) -> None:
    files = {**SHOP, "shop/prices.py": DEMO}
    del files["shop/report.py"]
    files["shop/report.py"] = (
        '"""The report of the shop\'s stock."""\n\n\ndef title() -> str:\n    return "Stock"\n'
    )
    views = _views(make, files)
    entries = views["entry_points"].facts
    assert entries["entry_points"] == []
    assert [e["name"] for e in entries["examples"]] == ["shop.prices"]
    flows = [v.facts["entry_point"] for i, v in views.items() if i.startswith("workflow:")]
    assert all(e["kind"] == "public_api" for e in flows)


def test_docs_that_import_its_modules_make_a_runnable_package_a_library(make: RepoFactory) -> None:
    views = _views(make, {**SHOP, "docs/guide.md": GUIDE})
    entries = views["entry_points"].facts
    assert entries["entry_points"] == []
    assert [e["target"] for e in entries["examples"]] == ["shop.report.main"]
    flows = [v.facts["entry_point"] for i, v in views.items() if i.startswith("workflow:")]
    assert all(e["kind"] == "public_api" for e in flows)
