"""`kbc ask` with validated citations (through litellm to a loopback server, or extractive),
the knowledge-gap log, and the Python API."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import LEXICAL, RepoFactory
from llm_server import Reply, chat_server

import kbc
from kbc.cli.main import cli
from kbc.domain.errors import PathRefused
from kbc.domain.settings import Settings, load_settings
from kbc.services.components import Components
from kbc.services.knowledge import KnowledgeBase
from kbc.store.gaps import GapLog
from kbc.views.llm import LiteLLMInterpreter

REPO = {
    "shop/__init__.py": '"""Shop."""\n',
    "shop/refunds.py": '''
        """Refunds are validated before money goes back."""

        MAX_REFUND_DAYS = 30


        def validate_refund(order, days_since_purchase):
            """A refund is allowed within MAX_REFUND_DAYS of purchase, once."""
            if days_since_purchase > MAX_REFUND_DAYS:
                raise ValueError("refund window closed")
            if order.refunded:
                raise ValueError("already refunded")
            return True
    ''',
    "shop/orders.py": '''
        """Orders."""


        def place_order(amount):
            """Place an order for an amount."""
            return {"amount": amount}
    ''',
    "docs/refunds.md": "# Refunds\n\nA refund must be asked for within thirty days.\n",
}


def open_kb(root: Path, settings: Settings | None = None) -> KnowledgeBase:
    """Lexical retrieval keeps these tests quick."""
    return KnowledgeBase(root, settings=settings, components=Components.lexical())


@pytest.fixture
def shop(make_repo: RepoFactory) -> Path:
    root = make_repo(REPO)
    open_kb(root).build(no_llm=True)
    return root


def test_the_public_api_is_exactly_these_names() -> None:
    assert kbc.__all__ == ["Answer", "KbcError", "KnowledgeBase", "Slice", "__version__"]
    for name in kbc.__all__:
        assert getattr(kbc, name) is not None
    with pytest.raises(AttributeError):
        kbc.Retriever  # noqa: B018 - private names stay private


def test_without_an_llm_the_answer_quotes_the_best_passages_and_says_so(shop: Path) -> None:
    result = CliRunner().invoke(cli, [*LEXICAL, "ask", "how are refunds validated?", "--repo", str(shop)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("_No LLM answer (no LLM configured (set KBC_LLM_MODEL))")
    assert "- [shop/refunds.py:1-12] (code)" in result.output
    assert 'raise ValueError("refund window closed")' in result.output
    data = json.loads(
        CliRunner()
        .invoke(
            cli,
            [
                *LEXICAL,
                "ask",
                "how are refunds validated?",
                "--repo",
                str(shop),
                "--no-llm",
                "--format",
                "json",
            ],
        )
        .output
    )
    assert data["mode"] == "extractive" and data["dropped_citations"] == []
    sources = {(s["path"], s["start_line"], s["end_line"]) for s in data["sources"]}
    assert {(c["path"], c["start_line"], c["end_line"]) for c in data["citations"]} <= sources


def _cite(request: dict[str, Any]) -> Reply:
    """An answer that cites a retrieved source, a file never retrieved and lines out of range."""
    prompt = request["messages"][-1]["content"]
    found = re.search(r"^### (shop/refunds\.py):(\d+)-(\d+)", prompt, re.MULTILINE)
    assert found is not None
    path, start, end = found.group(1), int(found.group(2)), int(found.group(3))
    return Reply(
        f"Refunds are refused after `MAX_REFUND_DAYS` days [{path}:{start + 6}-{start + 7}]. "
        f"They are also logged [shop/audit.py:1-9]. And emailed [{path}:{end + 50}-{end + 60}]."
    )


@pytest.mark.slow
def test_an_llm_answer_keeps_only_citations_inside_the_retrieved_sources(shop: Path) -> None:
    with chat_server(_cite) as server:
        interpreter = LiteLLMInterpreter(
            "openai/test-model", api_base=server.url, api_key="k", timeout=20, retries=0
        )
        with open_kb(shop) as kb:
            answer, query_id = kb.ask("how are refunds validated?", interpreter=interpreter)
        request = server.requests[0]
    assert "response_format" not in request  # prose, not a JSON object
    assert answer.mode == "llm" and answer.model == "openai/test-model"
    assert [str(c) for c in answer.citations] == ["[shop/refunds.py:7-8]"]
    assert answer.dropped == ("[shop/audit.py:1-9]", "[shop/refunds.py:62-72]")
    assert answer.text == (
        "Refunds are refused after `MAX_REFUND_DAYS` days [shop/refunds.py:7-8]. "
        "They are also logged. And emailed.\n"
    )
    assert answer.usage["prompt_tokens"] == 100 and len(query_id) == 16


@pytest.mark.slow
def test_a_knowledge_base_is_built_from_the_parts_it_is_given(make_repo: RepoFactory) -> None:
    """An embedder loaded once and an interpreter of one's own, passed in, not configured."""
    from kbc.index.embed import load_embedder, model_name
    from kbc.services.components import Embedding

    root = make_repo(REPO)
    embedder = load_embedder(model_name())
    with chat_server(_cite) as server:
        interpreter = LiteLLMInterpreter(
            "openai/test-model", api_base=server.url, api_key="k", timeout=20, retries=0
        )
        parts = Components(embedding=Embedding(embedder), interpreter=interpreter)
        with KnowledgeBase(root, settings=Settings(workers=1), components=parts) as kb:
            built = kb.build(no_llm=True)
            answer, _ = kb.ask("how are refunds validated?")
            status = kb.status()
        assert server.calls() == 1  # the answer; the build was asked for no LLM
    assert built.index.retrieval == "hybrid" and built.index.embedded == built.index.units > 0
    assert status.retrieval == "hybrid" and status.index["model"] == embedder.model_id
    assert answer.mode == "llm" and [str(c) for c in answer.citations] == ["[shop/refunds.py:7-8]"]
    with KnowledgeBase(root, settings=Settings(workers=1), components=Components.lexical("asked for")) as kb:
        header = kb.retrieve("validate refund window").text.splitlines()[0]
        assert header.split(" · confidence ")[0].endswith("retrieval: lexical (asked for)"), header
        assert kb.status().retrieval == "lexical" and kb.status().note == "asked for"


def test_gaps_are_logged_on_evidence_only(shop: Path) -> None:
    runner = CliRunner()
    # Three files are fewer than any repository the confidence was fitted on: its questions that
    # match sit near 0.3 there, a foreign one at 0; the floor is set for it (a setting).
    with open_kb(shop, Settings(confidence_floor=0.1)) as kb:
        kb.retrieve("validate refund window")  # found: not a gap
        for _ in range(2):
            kb.retrieve("kubernetes helm chart deployment")  # nothing matches: low confidence
        _, unhelpful = kb.retrieve_logged("place an order")
        assert kb.queries.report_usage(unhelpful, []) is True
        _, helpful = kb.retrieve_logged("refund days")
        assert kb.queries.report_usage(helpful, ["some-chunk-id"]) is True
        assert kb.queries.report_usage("no-such-query", []) is False
    listed = runner.invoke(cli, [*LEXICAL, "gaps", "--repo", str(shop), "--format", "json"])
    gaps = json.loads(listed.output)
    assert [(g["question"], g["count"], g["asked"], g["reasons"]) for g in gaps] == [
        ("kubernetes helm chart deployment", 2, 2, ["low confidence"]),
        ("place an order", 1, 1, ["reported unhelpful"]),
    ]
    text = runner.invoke(cli, [*LEXICAL, "gaps", "--repo", str(shop)]).output
    assert text.startswith("2×  kubernetes helm chart deployment\n")


def test_old_entries_are_pruned_after_the_retention(tmp_path: Path) -> None:
    day = 86400.0
    with GapLog(tmp_path / "gaps.sqlite", retention_days=30) as log:
        log.record("retrieve", "an old question", "qa", [], -1.0, True, now=1000 * day)
        log.record("retrieve", "a recent question", "qa", [], -1.0, True, now=1025 * day)
        assert [g.question for g in log.gaps(now=1026 * day)] == ["a recent question", "an old question"]
        assert [g.question for g in log.gaps(now=1031 * day)] == ["a recent question"]


def test_auto_refresh_applies_to_ask_and_the_api(shop: Path) -> None:
    from helpers import git, write_tree

    write_tree(shop, {"shop/coupons.py": '"""Coupons."""\n\n\ndef redeem_coupon(code):\n    return code\n'})
    git(shop, "add", "-A")
    git(shop, "commit", "-qm", "coupons")
    with open_kb(shop, load_settings(shop, assignments=["refresh.auto=true"])) as kb:
        answer, _ = kb.ask("redeem coupon code", no_llm=True)
    assert answer.sources[0].path == "shop/coupons.py"


def test_a_file_changed_since_the_build_is_served_redacted(shop: Path) -> None:
    (shop / "shop" / "orders.py").write_text('"""Orders."""\n\nKEY = "AKIAUJZDEGXDNCF32EPF"\n')
    with open_kb(shop) as kb:
        served = kb.reads.file("shop/orders.py")
    assert "AKIAUJZDEGXDNCF32EPF" not in served.text and "[REDACTED]" in served.text
    assert (served.start_line, served.end_line, served.lines) == (1, 3, 3)


def test_a_file_swapped_since_the_build_for_a_link_out_or_a_fifo_is_refused(
    shop: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("root:x:0:0:not the repository's\n")
    orders = shop / "shop" / "orders.py"
    orders.unlink()
    orders.symlink_to(outside)
    with open_kb(shop) as kb:
        with pytest.raises(PathRefused, match="leads outside the repository"):
            kb.reads.file("shop/orders.py")
        orders.unlink()
        os.mkfifo(orders)  # opening it for reading would wait for a writer forever
        with pytest.raises(PathRefused, match="no longer a regular file"):
            kb.reads.file("shop/orders.py")
        (shop / "shop").rename(shop / "gone")
        (shop / "shop").symlink_to(tmp_path)  # a tracked folder swapped for a link out
        outside.rename(tmp_path / "orders.py")
        with pytest.raises(PathRefused, match="leads outside the repository"):
            kb.reads.file("shop/orders.py")


def test_a_config_file_changed_since_the_build_is_redacted_as_config(make_repo: RepoFactory) -> None:
    root = make_repo({**REPO, "deploy/app.cfg": "[app]\nDEBUG=true\n"})
    open_kb(root).build(no_llm=True)
    (root / "deploy" / "app.cfg").write_text("[app]\nDEBUG=true\nDATABASE_PASSWORD=hunter2isnotgood\n")
    with open_kb(root) as kb:
        served = kb.reads.file("deploy/app.cfg")
    assert served.text == "[app]\nDEBUG=true\nDATABASE_PASSWORD=[REDACTED]\n"


def test_a_cli_retrieve_is_logged_like_an_ask(shop: Path) -> None:
    import sqlite3

    runner = CliRunner()
    for asked in (
        ["retrieve", "--repo", str(shop), "validate refund window"],
        ["ask", "--repo", str(shop), "how are refunds validated?"],
    ):
        assert runner.invoke(cli, [*LEXICAL, *asked]).exit_code == 0
    with sqlite3.connect(shop / ".kbc" / "gaps.sqlite") as db:
        logged = db.execute("SELECT kind, question FROM queries ORDER BY at").fetchall()
    assert logged == [("retrieve", "validate refund window"), ("ask", "how are refunds validated?")]
