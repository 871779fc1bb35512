"""The reranker seam: a chat model on loopback re-orders the first candidates, its order kept;
a slow or confused model leaves the fused order and the slice says so; an installed plug-in
takes the model's place."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import LEXICAL, RepoFactory
from llm_server import Reply, chat_server

from kbc.cli.main import cli
from kbc.domain.settings import load_settings
from kbc.services.components import Components
from kbc.services.knowledge import KnowledgeBase

SHOP = {
    "shop/__init__.py": '"""A shop."""\n',
    "shop/refunds.py": '''
        """Refunds."""


        def validate_refund(amount, paid):
            """A refund is valid when positive and not above what was paid."""
            return 0 < amount <= paid


        def refund_fee(amount):
            """The fee kept on a refund."""
            return round(amount * 0.02, 2)
    ''',
    "shop/orders.py": '''
        """Orders."""


        def cancel_order(order):
            """Cancel an order and refund what was paid."""
            order.status = "cancelled"
            return order
    ''',
    "shop/ledger.py": '''
        """The ledger."""


        def record_refund(ledger, amount):
            """Write a refund into the ledger."""
            ledger.append(("refund", amount))
    ''',
}
TASK = "a refund above what was paid is accepted: fix the refund validation"


@pytest.fixture
def built(make_repo: RepoFactory) -> Path:
    root = make_repo(SHOP)
    with KnowledgeBase(root, components=Components.lexical()) as kb:
        kb.build(no_llm=True)
    return root


def candidates_of(request: dict[str, Any]) -> list[tuple[int, str]]:
    """The numbered candidates a rerank prompt shows: (number, path)."""
    text = "\n".join(str(m.get("content", "")) for m in request["messages"])
    return [(int(n), path) for n, path in re.findall(r"^\[(\d+)\] (\S+?):\d+-\d+$", text, re.MULTILINE)]


def ledger_first(request: dict[str, Any]) -> Reply:
    """Puts shop/ledger.py's candidates first and leaves the others out of its answer."""
    shown = candidates_of(request)
    return Reply(json.dumps({"order": [n for n, path in shown if path == "shop/ledger.py"]}))


def knowledge_base(root: Path, url: str, **overrides: Any) -> KnowledgeBase:
    settings = replace(
        load_settings(root), rerank_model="openai/rr", rerank_api_base=url, llm_api_key="sk-test", **overrides
    )
    return KnowledgeBase(root, settings=settings, components=Components.lexical())


@pytest.mark.slow
def test_a_rerank_model_reorders_the_first_candidates_and_its_order_is_kept(built: Path) -> None:
    with KnowledgeBase(built, components=Components.lexical()) as kb:
        fused = kb.retrieve(TASK, budget=800)
    assert fused.items[0].path == "shop/refunds.py" and not fused.rerank and "rerank" not in fused.to_json()
    with chat_server(ledger_first) as server, knowledge_base(built, server.url) as kb:
        found = kb.retrieve(TASK, budget=800)
        assert server.calls() == 1
        shown = candidates_of(server.requests[0])
        assert len(shown) >= 2 and {"shop/refunds.py", "shop/ledger.py"} <= {p for _, p in shown}
        assert found.items[0].path == "shop/ledger.py"
        assert found.reranked and found.rerank == f"reranked by openai/rr ({len(shown)} candidates)"
        assert found.text.splitlines()[0].endswith(f"· {found.rerank}")
        data = json.loads(found.to_json())
        assert data["reranked"] is True and data["rerank"] == found.rerank
        # the candidates the model left out keep their fused order after the ones it named
        rest = [i.path for i in found.items if i.path != "shop/ledger.py"]
        assert rest == [i.path for i in fused.items if i.path != "shop/ledger.py"]
        assert found.fingerprint != fused.fingerprint
        assert kb.retrieve(TASK, budget=600).items[0].path == "shop/ledger.py"  # one ranking, two budgets
        assert server.calls() == 1
    with chat_server(lambda _r: Reply("{}", status=500)) as down, knowledge_base(built, down.url) as kb:
        again = kb.retrieve(TASK, budget=800)  # another process: the order is read from the store
        assert down.calls() == 0 and again.text == found.text
    answer = CliRunner().invoke(
        cli,
        [
            *LEXICAL,
            "-c",
            "retrieval.rerank_model=openai/rr",
            "-c",
            "retrieval.rerank_api_base=http://127.0.0.1:9",
            "ask",
            "--no-llm",
            "--format",
            "json",
            "--repo",
            str(built),
            TASK,
        ],
    )
    assert answer.exit_code == 0, answer.output
    assert json.loads(answer.stdout)["rerank"].startswith("not reranked (")


@pytest.mark.slow
def test_a_slow_or_confused_model_leaves_the_fused_order_and_says_so(built: Path) -> None:
    with KnowledgeBase(built, components=Components.lexical()) as kb:
        fused = kb.retrieve(TASK, budget=800)
    with (
        chat_server(lambda _r: Reply('{"order": [1]}', delay=5)) as slow,
        knowledge_base(built, slow.url, rerank_timeout=1) as kb,
    ):
        started = time.monotonic()
        found = kb.retrieve(TASK, budget=800)
        assert time.monotonic() - started < 4.5
        assert not found.reranked and re.match(r"not reranked \(.*[Tt]imeout.*\): fused order$", found.rerank)
        assert [i.id for i in found.items] == [i.id for i in fused.items]
        assert found.text.splitlines()[0].endswith(f"· {found.rerank}")
    with (
        chat_server(lambda _r: Reply("I would rather not say.")) as confused,
        knowledge_base(built, confused.url) as kb,
    ):
        found = kb.retrieve(TASK, budget=800)
        assert found.rerank.startswith("not reranked (the answer named no candidate")
        assert [i.id for i in found.items] == [i.id for i in fused.items]
        kb.retrieve(TASK, budget=800)
        assert confused.calls() == 2  # a failed rerank is not kept: the next request asks again


PLUGIN = """
class Reverse:
    name = "reverse"

    def order(self, task, candidates):
        return list(range(len(candidates)))[::-1]


def make():
    return Reverse()
"""


@pytest.mark.slow
def test_an_installed_plugin_reranks_and_an_unknown_one_is_named(built: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "kbc_reverse").mkdir(parents=True)
    (site / "kbc_reverse" / "__init__.py").write_text(PLUGIN, encoding="utf-8")
    info = site / "kbc_reverse-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: kbc-reverse\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text("[kbc.rerankers]\nreverse = kbc_reverse:make\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}

    def retrieve(model: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "kbc",
                *LEXICAL,
                "-c",
                f"retrieval.rerank_model={model}",
                "-c",
                "retrieval.rerank_candidates=3",
                "retrieve",
                "--repo",
                str(built),
                "--format",
                "json",
                "--budget",
                "800",
                TASK,
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    with KnowledgeBase(built, components=Components.lexical()) as kb:
        fused = kb.search(TASK, k=3)
    done = retrieve("plugin:reverse")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["reranked"] is True and data["rerank"] == "reranked by plugin:reverse (3 candidates)"
    assert data["items"][0]["path"] == fused[2].path
    missing = retrieve("plugin:nowhere")
    assert missing.returncode != 0
    assert "no reranker named 'nowhere' is installed" in missing.stderr
    assert "installed: reverse" in missing.stderr
