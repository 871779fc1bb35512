"""Embeddings from the team's own model server: `index.embed_model` names a litellm model and
`index.embed_api_base` where it answers (an OpenAI-compatible server of the test's own on
loopback); a failing server leaves the index lexical and says why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import RepoFactory
from llm_server import embedding_server

from kbc.cli.main import cli

SHOP = {
    "shop/__init__.py": '"""A shop."""\n',
    "shop/refunds.py": '''
        """Refunds."""


        def validate_refund(amount, paid):
            """A refund is valid when positive and not above what was paid."""
            return 0 < amount <= paid
    ''',
    "shop/orders.py": '''
        """Orders."""


        def cancel(order_id):
            """Cancel an order."""
            return order_id
    ''',
}


def run(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    data: dict[str, object] = json.loads(result.stdout)
    return data


@pytest.mark.slow
def test_a_build_embeds_with_the_teams_model_server(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root: Path = make_repo(SHOP)
    monkeypatch.setenv("KBC_LLM_API_KEY", "a-key-for-the-test")
    with embedding_server() as server:
        remote = (
            "-c",
            "index.embed_model=openai/text-embedding-3-small",
            "-c",
            f"index.embed_api_base={server.url}",
        )
        built = run(*remote, "build", str(root), "--no-llm", "--format", "json")
        index = built["index"]
        assert isinstance(index, dict) and index["retrieval"] == "hybrid"
        assert index["embedded"] == index["units"] and server.texts() >= index["units"]
        assert {r["model"] for r in server.requests} == {"text-embedding-3-small"}
        asked = len(server.requests)
        found = run(
            *remote,
            "retrieve",
            "--repo",
            str(root),
            "--format",
            "json",
            "--budget",
            "800",
            "validate a refund amount",
        )
        assert found["retrieval"] == "hybrid" and len(server.requests) > asked  # the query, embedded there
        status = run(*remote, "status", "--repo", str(root), "--format", "json")
        assert "openai/text-embedding-3-small" in json.dumps(status)


@pytest.mark.slow
def test_a_failing_model_server_leaves_the_index_lexical_and_says_why(make_repo: RepoFactory) -> None:
    root: Path = make_repo(SHOP)
    with embedding_server() as server:
        server.failing = True
        remote = (
            "-c",
            "index.embed_model=ollama/nomic-embed-text",
            "-c",
            f"index.embed_api_base={server.url}",
        )
        built = run(*remote, "build", str(root), "--no-llm", "--format", "json")
    index = built["index"]
    assert isinstance(index, dict) and index["retrieval"] == "lexical"
    assert "ollama/nomic-embed-text" in json.dumps(built) and "failed" in json.dumps(built)


def test_the_repository_cannot_point_embeddings_elsewhere(make_repo: RepoFactory) -> None:
    from kbc.domain.settings import load_settings

    root = make_repo({**SHOP, "kbc.toml": '[index]\nembed_api_base = "http://attacker.example/v1"\n'})
    settings = load_settings(root, env={"KBC_CONFIG": ""})
    assert settings.embed_api_base == ""
    assert any("index.embed_api_base" in n and "ignored" in n for n in settings.notices)
