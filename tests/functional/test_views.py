"""The views pass: facts from the code, prose through litellm's real HTTP path to a loopback
server (or from docstrings), grounding, the interpretation cache, rendering and retrieval."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import LEXICAL, RepoFactory
from llm_server import Reply, chat_server, grounded_answer, view_kind

from kbc.cli.main import cli
from kbc.domain.settings import Settings
from kbc.domain.views import VIEW_KINDS, View
from kbc.services.analyze import analyze_repository
from kbc.services.views import build_views_pass, read_views
from kbc.views.build import ViewsSummary
from kbc.views.llm import LiteLLMInterpreter
from kbc.views.render import render_all

GOLDEN = Path(__file__).parent / "golden" / "shop-views"

SHOP = {
    "pyproject.toml": """
        [project]
        name = "shop"
        version = "1.0"

        [project.scripts]
        shop = "shop.cli:main"
    """,
    "shop/__init__.py": '"""Shop: orders, their states and payments."""\n',
    "shop/models.py": '''
        """Orders and their states."""
        from dataclasses import dataclass
        from enum import Enum


        class Status(Enum):
            """Where an order is in its life."""

            NEW = "new"
            PAID = "paid"


        @dataclass
        class Order:
            """A customer's order."""

            id: int
            amount: float
            status: Status = Status.NEW
    ''',
    "shop/orders.py": '''
        """Placing orders."""
        from shop.models import Order
        from shop.payments import charge

        MAX_ORDER = 1000


        def place_order(order_id, amount):
            """Create an order and charge it."""
            if amount <= 0:
                raise ValueError("amount must be positive")
            if amount > MAX_ORDER:
                raise ValueError("amount over the order limit")
            order = Order(order_id, amount)
            charge(order)
            return order
    ''',
    "shop/payments.py": '''
        """Payment provider calls."""
        import os

        import requests


        def charge(order):
            """Charge the order's amount with the payment provider."""
            url = os.environ["PAYMENTS_URL"]
            return requests.post(url, json={"amount": order.amount})
    ''',
    "shop/cli.py": '''
        """The shop's command line."""
        import argparse

        from shop.orders import place_order


        def main():
            """Place an order from the command line."""
            parser = argparse.ArgumentParser(prog="shop")
            parser.add_argument("amount", type=float)
            args = parser.parse_args()
            place_order(1, args.amount)


        if __name__ == "__main__":
            main()
    ''',
    "docs/orders.md": "# Orders\n\nOrders are placed from the command line.\n",
}

Script = Callable[[dict[str, Any]], Reply]


@pytest.fixture
def shop(make_repo: RepoFactory) -> Path:
    root = make_repo(SHOP)
    analyze_repository(root, Settings(workers=1))
    return root


def interpreter(url: str, *, timeout: int = 20, retries: int = 0) -> LiteLLMInterpreter:
    return LiteLLMInterpreter(
        "openai/test-model", api_base=url, api_key="test-key", timeout=timeout, retries=retries, backoff=0.05
    )


def build(root: Path, script: Script | None = None, **options: Any) -> tuple[list[View], ViewsSummary, int]:
    """The views pass over ``root``'s store; with a script, through the loopback LLM server."""
    settings = Settings(workers=1, llm_concurrency=2)
    if script is None:
        views, summary = build_views_pass(root / ".kbc", root, settings, no_llm=True)
        return views, summary, 0
    with chat_server(script) as server:
        views, summary = build_views_pass(
            root / ".kbc", root, settings, interpreter=interpreter(server.url, **options)
        )
        return views, summary, server.calls()


def by_id(views: list[View]) -> dict[str, View]:
    return {v.id: v for v in views}


def view_problems(view: View) -> list[str]:
    """How a view breaks its kind's schema (empty for every view the pass writes)."""
    from kbc.domain.codec import to_data
    from kbc.views.kinds import view_schema
    from kbc.views.schema import schema_errors

    return schema_errors(view_schema(view.kind), to_data(view))


def test_every_kind_is_written_from_the_facts_and_valid(shop: Path) -> None:
    views, summary, _ = build(shop)
    assert {v.kind for v in views} == set(VIEW_KINDS)
    assert len({v.id for v in views}) == len(views)
    assert all(view_problems(v) == [] for v in views)
    found = by_id(views)
    architecture = found["architecture"].facts
    assert architecture["repository"] == "shop"  # its main package, wherever it is checked out
    assert [e["name"] for e in architecture["entry_points"] if e["kind"] == "console_script"] == ["shop"]
    workflow = found["workflow:shop.cli.main"].facts
    assert [(e["kind"], e["name"]) for e in workflow["also_via"]] == [
        ("argparse", "shop"),
        ("main_guard", "shop.cli"),
    ]
    assert [s["symbol"] for s in workflow["steps"]] == [
        "shop.cli.main",
        "shop.orders.place_order",
        "shop.models.Order",
        "shop.payments.charge",
    ]
    assert workflow["steps"][1]["location"].startswith("shop/orders.py:")
    rules = found["business_rules:shop"].facts["rules"]
    assert [(r["kind"], r.get("message")) for r in rules[:2]] == [
        ("raise", "amount must be positive"),
        ("raise", "amount over the order limit"),
    ]
    assert rules[1]["limits"] == ["MAX_ORDER"]
    concepts = {c["name"]: c for c in found["domain_concepts:shop"].facts["concepts"]}
    assert concepts["shop.models.Order"]["kind"] == "dataclass"
    assert [f["name"] for f in concepts["shop.models.Order"]["fields"]] == ["id", "amount", "status"]
    assert concepts["shop.models.Status"]["kind"] == "enum"
    integrations = {(i["kind"], i["name"]) for i in found["integrations"].facts["integrations"]}
    assert ("env_var", "PAYMENTS_URL") in integrations
    assert summary.model == "" and summary.llm_calls == 0


def test_without_an_llm_prose_comes_from_docstrings_or_stays_empty(shop: Path) -> None:
    views, summary, _ = build(shop)
    found = by_id(views)
    architecture = found["architecture"]
    assert architecture.provenance.source == "docstring"
    assert architecture.interpretation["overview"] == "Shop: orders, their states and payments."
    assert architecture.interpretation["design_decisions"] == []
    rules = found["business_rules:shop"].interpretation["rules"]
    assert rules[0] == {"n": 1, "rule": "amount must be positive"}
    integrations = found["integrations"]
    assert integrations.provenance.source == "none" and integrations.interpretation == {"integrations": []}
    assert summary.by_source == {
        "docstring": sum(1 for v in views if v.provenance.source == "docstring"),
        "none": sum(1 for v in views if v.provenance.source == "none"),
    }


def test_rendered_views_match_the_golden_files(shop: Path) -> None:
    views, _, _ = build(shop)
    files = render_all(views, "shop", "0" * 40)
    if os.environ.get("KBC_UPDATE_GOLDEN"):
        for relative, text in files.items():
            (GOLDEN / relative).parent.mkdir(parents=True, exist_ok=True)
            (GOLDEN / relative).write_text(text, encoding="utf-8")
    expected = {p.relative_to(GOLDEN).as_posix(): p.read_text(encoding="utf-8") for p in GOLDEN.rglob("*.md")}
    assert files == expected
    assert "```mermaid\ngraph TD" in files["workflow/shop.cli.main.md"]


def test_llm_prose_is_validated_grounded_and_marked(shop: Path) -> None:
    views, summary, calls = build(shop, lambda request: Reply(grounded_answer(request)))
    assert calls == summary.llm_calls == len(views)
    assert summary.failed == 0 and summary.ungrounded == 0
    assert summary.prompt_tokens == 100 * calls and summary.completion_tokens == 20 * calls
    architecture = by_id(views)["architecture"]
    assert architecture.provenance.source == "llm" and architecture.provenance.model == "openai/test-model"
    assert architecture.interpretation["overview"].startswith("The repository is organised around")
    assert all(view_problems(v) == [] for v in views)


@pytest.mark.slow
def test_a_second_build_over_unchanged_code_makes_no_llm_call(shop: Path) -> None:
    first, _, calls = build(shop, lambda request: Reply(grounded_answer(request)))
    assert calls == len(first)
    second, summary, calls = build(shop, lambda request: Reply(grounded_answer(request)))
    assert calls == 0 and summary.cached == len(second) and summary.llm_calls == 0
    assert [v.interpretation for v in second] == [v.interpretation for v in first]


def test_prose_naming_code_that_does_not_exist_is_removed_and_counted(shop: Path) -> None:
    def script(request: dict[str, Any]) -> Reply:
        if view_kind(request) == "architecture":
            return Reply(
                json.dumps(
                    {
                        "overview": "Orders start in `shop.orders.place_order`. "
                        "Refunds go through `shop.refunds.issue_refund()` first.",
                        "design_decisions": [
                            "Payments are isolated in shop/payments.py.",
                            "Prices come from `shop.pricing.PriceBook`.",
                        ],
                    }
                )
            )
        return Reply(grounded_answer(request))

    views, summary, _ = build(shop, script)
    architecture = by_id(views)["architecture"]
    assert architecture.interpretation["overview"] == "Orders start in `shop.orders.place_order`."
    assert architecture.interpretation["design_decisions"] == ["Payments are isolated in shop/payments.py."]
    assert architecture.grounding.removed == 2
    assert architecture.grounding.ungrounded == ("shop.pricing.PriceBook", "shop.refunds.issue_refund()")
    assert summary.ungrounded == 2


def test_invalid_json_gets_one_repair_attempt(shop: Path) -> None:
    seen: dict[str, int] = {}

    def script(request: dict[str, Any]) -> Reply:
        kind = view_kind(request)
        seen[kind] = seen.get(kind, 0) + 1
        if kind == "module" and len(request["messages"]) == 2:
            return Reply("Here is the JSON: {purpose: oops")
        if kind == "feature":
            return Reply('{"summary": 42}')  # wrong type, and again on repair
        return Reply(grounded_answer(request))

    views, summary, _ = build(shop, script)
    found = by_id(views)
    assert found["module:shop"].provenance.source == "llm"
    assert summary.repaired == 1
    feature = next(v for v in views if v.kind == "feature")
    assert feature.provenance.source == "docstring"  # the fallback, never the invalid reply
    assert seen["feature"] == 2 and summary.failed == 1
    assert any("did not match the schema, twice" in e for e in summary.errors)


@pytest.mark.slow
def test_server_errors_and_timeouts_cost_only_their_view(shop: Path) -> None:
    def script(request: dict[str, Any]) -> Reply:
        kind = view_kind(request)
        if kind == "integrations":
            return Reply(status=500)
        if kind == "entry_points":
            return Reply(grounded_answer(request), delay=4)
        return Reply(grounded_answer(request))

    views, summary, calls = build(shop, script, timeout=1, retries=1)
    found = by_id(views)
    assert found["integrations"].provenance.source == "none"
    assert found["entry_points"].provenance.source == "none"
    assert summary.failed == 2 and summary.cached == 0
    assert sum(v.provenance.source == "llm" for v in views) == len(views) - 2
    assert calls == len(views) - 2 + 2 * 2  # each failing view tried twice (one retry)
    errors = " ".join(summary.errors)
    assert "integrations: the LLM call failed: InternalServerError after 2 attempts" in errors
    assert "entry_points: the LLM call failed: Timeout after 2 attempts" in errors
    # Failures are not cached: the next build asks again, and only for those two.
    _, again, calls = build(shop, lambda request: Reply(grounded_answer(request)))
    assert calls == 2 and again.cached == len(views) - 2 and again.failed == 0


@pytest.mark.slow
def test_secrets_are_redacted_from_prompts(make_repo: RepoFactory) -> None:
    files = dict(SHOP)
    files["shop/payments.py"] = '''
        """Payment provider calls."""
        from dataclasses import dataclass


        @dataclass
        class Gateway:
            """The provider, reached with key AKIAUJZDEGXDNCF32EPF."""

            url: str = "https://pay.example.com"
            secret: str = "2hpChYgCfrL1spNxnyVmihA+2O76UMFxFkM+R5Kj"


        def charge(order):
            return order
    '''
    root = make_repo(files)
    analyze_repository(root, Settings(workers=1))
    with chat_server(lambda request: Reply(grounded_answer(request))) as server:
        build_views_pass(root / ".kbc", root, Settings(workers=1), interpreter=interpreter(server.url))
        sent = json.dumps(server.requests)
    assert "Gateway" in sent  # the concept and its fields were sent, their values redacted
    assert "AKIAUJZDEGXDNCF32EPF" not in sent and "2hpChYgCfrL1" not in sent


def test_cli_build_views_render_and_architecture_retrieval(shop: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, [*LEXICAL, "build", str(shop), "--no-llm"])
    assert result.exit_code == 0, result.output
    assert "kbc views:" in result.output and "llm           none" in result.output
    listing = runner.invoke(cli, [*LEXICAL, "views", "--repo", str(shop), "--kind", "workflow"])
    assert listing.output.splitlines() == [
        "workflow:shop.cli.main\tdocstring\tWorkflow: shop.cli.main (console_script shop)"
    ]
    shown = runner.invoke(
        cli, [*LEXICAL, "views", "--repo", str(shop), "--id", "architecture", "--format", "json"]
    )
    assert json.loads(shown.output)[0]["facts"]["repository"] == "shop"
    out = tmp_path / "site"
    rendered = runner.invoke(cli, [*LEXICAL, "render", "--repo", str(shop), "--out", str(out)])
    assert rendered.exit_code == 0, rendered.output
    assert (out / "index.md").read_text().count("](") == len(read_views(shop / ".kbc"))
    assert "```mermaid" in (out / "architecture.md").read_text()
    question = "how is the shop organised: modules, layers, entry points"
    sliced = runner.invoke(
        cli,
        [
            *LEXICAL,
            "retrieve",
            "--repo",
            str(shop),
            "--use-case",
            "architecture",
            "--format",
            "json",
            "--min-confidence",  # a three-module shop holds few of the question's words: the
            "0",  # slice, not the floor, is what is tested here
            question,
        ],
    )
    assert sliced.exit_code == 0, sliced.output
    items = json.loads(sliced.output)["items"]
    # the code that shows the organisation, with the views that map it (benchmarks/RESULTS.md,
    # "What views add to retrieval")
    assert {"shop/orders.py", "shop/cli.py", "@views/architecture.md"} <= {i["path"] for i in items}


def test_render_into_a_folder_that_cannot_be_made_is_one_clear_error(shop: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, [*LEXICAL, "build", str(shop), "--no-llm"]).exit_code == 0
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder\n")
    rendered = runner.invoke(cli, [*LEXICAL, "render", "--repo", str(shop), "--out", str(blocked / "site")])
    assert rendered.exit_code == 1
    assert "cannot write the rendered views to" in rendered.output and "--out" in rendered.output
    assert "Traceback" not in rendered.output and "unexpected" not in rendered.output


def test_no_llm_keeps_the_prose_already_paid_for(shop: Path) -> None:
    first, _, calls = build(shop, lambda request: Reply(grounded_answer(request)))
    assert calls == len(first)
    configured = Settings(workers=1, llm_model="openai/test-model")
    again, summary = build_views_pass(shop / ".kbc", shop, configured, no_llm=True)
    assert summary.llm_calls == 0 and summary.cached == len(first)
    assert {v.provenance.source for v in again} == {"llm"}
    assert [v.interpretation for v in again] == [v.interpretation for v in first]


def test_a_commit_that_changes_no_fact_changes_no_view(shop: Path) -> None:
    from helpers import git

    before, _, _ = build(shop)
    (shop / "docs" / "orders.md").write_text("# Orders\n\nPlaced from the command line, paid at once.\n")
    git(shop, "commit", "-qam", "docs only")
    analyze_repository(shop, Settings(workers=1))
    after, _, _ = build(shop)
    hashes = [(v.id, v.provenance.facts_hash) for v in before]
    assert [(v.id, v.provenance.facts_hash) for v in after] == hashes


LIBRARY = {
    "fetchlib/__init__.py": '''
        """Fetch things over a transport.

        Usage::

            >>> import fetchlib
        """
        from fetchlib.client import Client, fetch

        __all__ = ["Client", "fetch"]
    ''',
    "fetchlib/base.py": """
        class Transport:
            def open(self, url):
                return self.connect(url)

            def connect(self, url):
                shaken = self.handshake(url)
                return shaken + self.encode(url)

            def handshake(self, url):
                return len(url)

            def encode(self, url):
                return url.encode()
    """,
    "fetchlib/client.py": '''
        from fetchlib.base import Transport


        class Client(Transport):
            """A client over a transport."""

            def get(self, url):
                prepared = self.prepare(url)
                return prepared + self.open(url)

            def prepare(self, url):
                return self.normalise(url)

            def normalise(self, url):
                return url.strip()

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return None


        def fetch(url):
            """Fetch one url."""
            with Client() as client:
                return client.get(url)


        def helper(url):
            return url
    ''',
    "tests/test_client.py": """
        from fetchlib import fetch

        def test_fetch():
            assert fetch("u")
    """,
}


def test_a_library_without_entry_points_gets_workflows_from_its_public_api(make_repo: RepoFactory) -> None:
    root = make_repo(LIBRARY)
    analyze_repository(root, Settings(workers=1))
    views = by_id(build(root)[0])
    flows = {i: v for i, v in views.items() if v.kind == "workflow"}
    # fetch reaches Client.get and everything it calls, so Client.get's own flow adds nothing
    assert list(flows) == ["workflow:fetchlib.client.fetch"]
    facts = flows["workflow:fetchlib.client.fetch"].facts
    assert (facts["entry_point"]["kind"], facts["entry_point"]["name"]) == ("public_api", "fetchlib.fetch")
    steps = [(s["depth"], s["symbol"].removeprefix("fetchlib.")) for s in facts["steps"]]
    assert steps == [
        (0, "client.fetch"),
        (1, "client.Client"),
        (1, "client.Client.get"),
        (2, "client.Client.prepare"),
        (3, "client.Client.normalise"),
        (2, "base.Transport.open"),
        (3, "base.Transport.connect"),  # inherited, via self
        (4, "base.Transport.handshake"),
        (4, "base.Transport.encode"),
    ]
    overview = views["architecture"].interpretation["overview"]
    assert overview == "Fetch things over a transport."  # no literal block, no doctest
    (feature,) = [v for v in views.values() if v.kind == "feature"]
    assert (feature.id, feature.title) == ("feature:fetchlib", "Feature: fetchlib (fetch, Client, Transport)")
    assert "tests" not in feature.facts["modules"]


WEB_SERVICE = {
    "pyproject.toml": '[project]\nname = "notes"\nversion = "1.0"\ndependencies = ["flask"]\n',
    "notes/__init__.py": '"""Notes: a small web service that keeps notes."""\n',
    "notes/app.py": '''
        """The HTTP routes."""
        import os

        from flask import Flask, jsonify, request

        from notes.store import NoteStore

        DATABASE_VAR = "NOTES_DATABASE"
        app = Flask(__name__)
        store = NoteStore(os.environ.get(DATABASE_VAR, "notes.db"))


        @app.route("/notes", methods=["POST"])
        def create_note():
            """Create a note from the posted JSON."""
            return jsonify(store.add(request.json["text"]))


        @app.get("/notes/<int:note_id>")
        def read_note(note_id):
            """One note by its id."""
            return jsonify(store.get(note_id))
    ''',
    "notes/store.py": '''
        """Where notes are kept."""
        import sqlite3
        from dataclasses import dataclass


        @dataclass
        class Note:
            """A note a user wrote."""

            id: int
            text: str


        class NoteStore:
            def __init__(self, path):
                self.db = sqlite3.connect(path)

            def add(self, text):
                if not text:
                    raise ValueError("a note needs text")
                return Note(1, text)

            def get(self, note_id):
                return Note(note_id, "")
    ''',
}

SRC_NAMESPACE = {
    "pyproject.toml": '[project]\nname = "acme-geo"\nversion = "1.0"\n',
    "src/acme/geo/__init__.py": '''
        """Geometry for acme: distances between points.

        .. note:: coordinates are in metres.
        """
        from acme.geo.distance import distance

        __all__ = ["distance"]
    ''',
    "src/acme/geo/distance.py": '''
        """Distances."""
        from acme.geo.points import Point, normalise


        def distance(a, b):
            """The distance between two points."""
            check(a)
            first = normalise(Point(*a))
            second = normalise(Point(*b))
            return abs(first.x - second.x) + abs(first.y - second.y)


        def check(pair):
            if len(pair) != 2:
                raise ValueError("a point has two coordinates")
    ''',
    "src/acme/geo/points.py": '''
        """Points."""
        from typing import NamedTuple


        class Point(NamedTuple):
            x: float
            y: float


        def normalise(point):
            return Point(_rounded(point.x), _rounded(point.y))


        def _rounded(value):
            return round(value, 3)
    ''',
}


def _kinds(views: dict[str, View]) -> list[str]:
    return sorted(views)


def test_a_web_service_gets_its_routes_as_entry_points_and_workflows(make_repo: RepoFactory) -> None:
    root = make_repo(WEB_SERVICE)
    analyze_repository(root, Settings(workers=1))
    views = by_id(build(root)[0])
    assert _kinds(views) == [
        "architecture",
        "business_rules:notes",
        "domain_concepts:notes",
        "entry_points",
        "feature:notes",
        "integrations",
        "module:notes",
        "workflow:notes.app.create_note",
        "workflow:notes.app.read_note",
    ]
    routes = {(e["kind"], e["name"]) for e in views["entry_points"].facts["entry_points"]}
    assert routes == {("flask_route", "/notes"), ("flask_route", "/notes/<int:note_id>")}
    found = {(i["kind"], i["name"]) for i in views["integrations"].facts["integrations"]}
    assert {("env_var", "NOTES_DATABASE"), ("database", "sqlite3.connect"), ("package", "flask")} <= found
    assert views["architecture"].interpretation["overview"] == "Notes: a small web service that keeps notes."
    steps = [s["symbol"] for s in views["workflow:notes.app.create_note"].facts["steps"]]
    assert steps[:2] == ["notes.app.create_note", "notes.store.NoteStore.add"]
    (rule,) = views["business_rules:notes"].facts["rules"]
    assert rule["message"] == "a note needs text"


def test_a_namespace_package_in_a_src_layout_is_named_and_followed_from_its_api(
    make_repo: RepoFactory,
) -> None:
    root = make_repo(SRC_NAMESPACE)
    analyze_repository(root, Settings(workers=1))
    views = by_id(build(root)[0])
    assert [i for i in _kinds(views) if not i.startswith(("module:", "domain_concepts:"))] == [
        "architecture",
        "business_rules:acme",
        "entry_points",
        "feature:acme",
        "integrations",
        "workflow:acme.geo.distance.distance",
    ]
    flow = views["workflow:acme.geo.distance.distance"].facts
    assert (flow["entry_point"]["kind"], flow["entry_point"]["name"]) == ("public_api", "acme.geo.distance")
    assert [s["symbol"].removeprefix("acme.geo.") for s in flow["steps"]] == [
        "distance.distance",
        "distance.check",
        "points.Point",
        "points.normalise",
        "points._rounded",
    ]
    assert views["architecture"].facts["repository"] == "acme"
    assert views["architecture"].interpretation["overview"] == "Geometry for acme: distances between points."


def test_a_workflow_follows_a_call_to_a_base_method_into_its_overrides(make_repo: RepoFactory) -> None:
    root = make_repo(
        {
            "wire/__init__.py": "from wire.session import Session\n__all__ = ['Session']\n",
            "wire/adapters.py": """
            class BaseAdapter:
                def send(self, request):
                    raise NotImplementedError

            class HTTPAdapter(BaseAdapter):
                def send(self, request):
                    return self.build(request)

                def build(self, request):
                    return request
        """,
            "wire/session.py": """
            from wire.adapters import BaseAdapter, HTTPAdapter

            class Session:
                def get_adapter(self, url) -> BaseAdapter:
                    return HTTPAdapter()

                def request(self, url):
                    prepared = self.prepare(url)
                    adapter = self.get_adapter(url)
                    return adapter.send(prepared)

                def prepare(self, url):
                    return url.strip()
        """,
        }
    )
    analyze_repository(root, Settings(workers=1))
    views = by_id(build(root)[0])
    steps = [
        (s["depth"], s["symbol"].removeprefix("wire."))
        for s in views["workflow:wire.session.Session.request"].facts["steps"]
    ]
    assert steps == [
        (0, "session.Session.request"),
        (1, "session.Session.prepare"),
        (1, "session.Session.get_adapter"),
        (2, "adapters.HTTPAdapter"),
        (1, "adapters.BaseAdapter.send"),
        (2, "adapters.HTTPAdapter.send"),
        (3, "adapters.HTTPAdapter.build"),
    ]
