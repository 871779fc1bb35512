"""What `status` says of retrieval agrees with what slices get: a model server that fails once
the index is built turns slices lexical, and the server's status (REST, the UI) says so."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from helpers import RepoFactory
from llm_server import embedding_server
from web import running

from kbc.cli.main import cli as main
from kbc.domain.settings import load_settings
from kbc.services.knowledge import KnowledgeBase

SHOP = {
    "shop/__init__.py": '"""A shop."""\n',
    "shop/refunds.py": (
        '"""Refunds."""\n\n\ndef validate_refund(amount, paid):\n    return 0 < amount <= paid\n'
    ),
}


@pytest.mark.slow
def test_a_server_whose_model_fails_says_lexical_where_slices_are(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root: Path = make_repo(SHOP)
    monkeypatch.setenv("KBC_LLM_API_KEY", "a-key-for-the-test")
    with embedding_server() as server:
        settings = load_settings(
            root,
            assignments=[
                "index.embed_model=openai/text-embedding-3-small",
                f"index.embed_api_base={server.url}",
            ],
        )
        kb = KnowledgeBase(root, settings=settings)
        kb.build(no_llm=True)
        with running(kb) as url:
            assert httpx.get(f"{url}/api/v1/status").json()["retrieval"] == "hybrid"
            server.failing = True
            sliced = httpx.post(
                f"{url}/api/v1/retrieve", json={"task": "validate a refund amount", "budget": 600}
            )
            assert sliced.json()["retrieval"] == "lexical"
            status = httpx.get(f"{url}/api/v1/status").json()
            page = httpx.get(f"{url}/").text
        assert status["retrieval"] == "lexical" and "openai/text-embedding-3-small" in status["note"]
        assert "lexical" in page
        remote = [
            "-c",
            "index.embed_model=openai/text-embedding-3-small",
            "-c",
            f"index.embed_api_base={server.url}",
        ]
        cli = CliRunner().invoke(main, [*remote, "status", "--repo", str(root), "--format", "json"])
        assert json.loads(cli.output)["retrieval"] == "lexical"  # the command line asks the model too
