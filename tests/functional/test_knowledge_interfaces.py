"""Team knowledge through every interface: budgets on the tools that return text, `kbc search`,
and the metrics of documents behind the code, cache hits, knowledge left out and proposals."""

from __future__ import annotations

import json

import anyio
import httpx
import pytest
from click.testing import CliRunner
from helpers import RepoFactory
from web import running

from kbc.cli.main import cli
from kbc.domain.knowledge_roots import KnowledgeRoot
from kbc.domain.settings import Settings
from kbc.serve.metrics import Metrics
from kbc.services.components import Components
from kbc.services.knowledge import KnowledgeBase

CODE = {
    "shop/__init__.py": '"""A shop."""\n',
    "shop/payouts.py": '''
        """Payouts to sellers."""


        def schedule_payout(seller, amount_cents):
            """Schedule a payout of an amount in cents."""
            return {"seller": seller, "amount": amount_cents}
    ''',
}
NOTES = {
    "domain/payouts.md": '---\nrefs: ["repo:shop/payouts.py"]\n---\n# Payouts\n\n## Window\n\n'
    "A payout waits for the refund window of 180 days.\n\n## Batch\n\nPayouts go "
    "through `shop.payouts.cancel_payout` on Mondays.\n",
    "conventions/money.md": "# Money\n\nMoney is never a float: amounts are integers in cents.\n",
}


@pytest.fixture
def kb(make_repo: RepoFactory) -> KnowledgeBase:
    notes = make_repo(NOTES)
    root = make_repo(CODE)
    settings = Settings(embed_model="none", knowledge=(KnowledgeRoot("team", str(notes)),))
    built = KnowledgeBase(root, settings=settings, components=Components.lexical())
    built.build(no_llm=True)
    return built


def test_kbc_search_lists_hits_within_a_budget(kb: KnowledgeBase) -> None:
    runner = CliRunner()
    args = [
        "-c",
        "index.embed_model=none",
        "search",
        "refund window payout",
        "--repo",
        str(kb.root),
        "--scope",
        "domain",
    ]
    shown = runner.invoke(cli, args)
    assert shown.exit_code == 0, shown.output
    assert "@knowledge/team/domain/payouts.md:" in shown.output and "Payouts > Window" in shown.output
    every = json.loads(runner.invoke(cli, [*args, "--format", "json"]).output)
    assert every and {"path", "start_line", "end_line", "score", "text"} <= set(every[0])
    first = every[0]["text"]
    budget = len(first.split()) * 3  # a generous count of the first hit's tokens, short of two hits
    within = json.loads(runner.invoke(cli, [*args, "--format", "json", "--budget", str(budget)]).output)
    assert 1 <= len(within) < len(every)
    kb.close()


def test_budgets_on_search_and_files_over_rest_and_mcp(kb: KnowledgeBase) -> None:
    from kbc.serve.mcp import create_server

    with running(kb) as url:
        hits = httpx.get(f"{url}/api/v1/search", params={"q": "payout refund money", "k": 5}).json()
        fewer = httpx.get(
            f"{url}/api/v1/search", params={"q": "payout refund money", "k": 5, "budget": 40}
        ).json()
        assert len(hits) > len(fewer)
        whole = httpx.get(f"{url}/api/v1/files/shop/payouts.py").json()
        cut = httpx.get(f"{url}/api/v1/files/shop/payouts.py", params={"budget": 12}).json()
    assert "truncated" not in whole and cut["truncated"] is True
    assert cut["start_line"] == 1 and cut["end_line"] < whole["end_line"]
    assert whole["text"].startswith(cut["text"])

    async def schemas() -> dict[str, set[str]]:
        tools = await create_server(kb).list_tools()
        return {t.name: set(t.input_schema["properties"]) for t in tools}

    found = anyio.run(schemas)
    assert all("budget" in found[name] for name in ("retrieve_slice", "ask", "search", "get_file"))
    kb.close()


def test_metrics_of_drift_cache_knowledge_and_proposals(kb: KnowledgeBase) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    def value(text: str, name: str, **labels: str) -> float:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                    return float(sample.value)
        return -1.0

    metrics = Metrics(kb)
    kb.queries.listen(metrics.heard)
    task = "refund window payout money cents monday batch"
    kb.retrieve(task, "qa", budget=4000)
    kb.retrieve(task, "qa", budget=4000)  # the same request: from the cache
    kb.retrieve(task, "qa", budget=120)  # too small for the team's sections
    kb.proposals.propose(
        "domain/payouts.md", content="# Payouts\n\nWeekly.\n", rationale="shorter", author="agent"
    )
    text = metrics.exposition().decode()
    assert value(text, "kbc_documents_behind") == 1  # payouts.md names a function the code lacks
    assert value(text, "kbc_slice_cache_hits_total") == 1
    assert value(text, "kbc_knowledge_sections_left_out_total", use_case="qa") >= 1
    assert value(text, "kbc_proposals", status="open") == 1
    assert value(text, "kbc_proposals", status="merged") == 0
    kb.close()


def test_a_view_fits_a_budget_and_says_what_was_cut(kb: KnowledgeBase) -> None:
    from kbc.services.payloads import fitted

    count = kb.components.token_counter().count
    view = {
        "id": "module:shop",
        "kind": "module",
        "title": "shop",
        "facts": {"symbols": [f"shop.payouts.function_{n}" for n in range(200)], "files": 3},
        "interpretation": {"summary": "Payouts to sellers. " * 40},
        "provenance": {"facts_hash": "0" * 40},
    }
    size = count(json.dumps(view))
    small = fitted(view, size // 4, count)
    assert count(json.dumps(small, ensure_ascii=False)) <= size // 4
    assert small["truncated"] == ["facts.symbols"] or "facts.symbols" in small["truncated"]
    assert (small["id"], small["kind"], small["title"], small["provenance"]) == (
        view["id"],
        view["kind"],
        view["title"],
        view["provenance"],
    )
    assert small["facts"]["symbols"] == view["facts"]["symbols"][: len(small["facts"]["symbols"])]
    assert fitted(view, size + 10, count) == view  # what fits is untouched
    with running(kb) as url:
        whole = httpx.get(f"{url}/api/v1/views/architecture").json()
        fits = httpx.get(f"{url}/api/v1/views/architecture", params={"budget": 100_000}).json()
        refused = httpx.get(f"{url}/api/v1/views/architecture", params={"budget": 5})
    assert fits == whole
    assert refused.status_code == 400 and "too small" in refused.json()["error"]
    kb.close()
