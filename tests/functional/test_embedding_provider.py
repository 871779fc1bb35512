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


def vector_widths(store: Path) -> tuple[set[int], set[int]]:
    """The widths of the vectors the published index's snapshot holds and the local Chroma
    store holds."""
    import chromadb
    from chromadb.config import Settings

    from kbc.index.exact import load_snapshot
    from kbc.index.lexical import LexicalIndex
    from kbc.index.vectors import forget_local_store

    where = store / "index"
    lexical = LexicalIndex(where / "lexical.sqlite")
    try:
        digest = lexical.meta("vectors")
    finally:
        lexical.close()
    snapshot = load_snapshot(where, digest)
    assert snapshot is not None
    forget_local_store(where / "chroma")
    client = chromadb.PersistentClient(
        path=str(where / "chroma"), settings=Settings(anonymized_telemetry=False)
    )
    held: set[int] = set()
    for collection in client.list_collections():
        found = client.get_collection(collection if isinstance(collection, str) else collection.name)
        held |= {len(v) for v in found.get(include=["embeddings"])["embeddings"]}
    forget_local_store(where / "chroma")
    return {int(snapshot.matrix.shape[1])}, held


@pytest.mark.slow
def test_a_model_answering_another_width_under_its_name_is_embedded_again(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root: Path = make_repo(SHOP)
    monkeypatch.setenv("KBC_LLM_API_KEY", "a-key-for-the-test")
    question = ("--format", "json", "--budget", "800", "validate a refund amount")
    with embedding_server(dim=32) as server:
        remote = (
            "-c",
            "index.embed_model=openai/text-embedding-3-small",
            "-c",
            f"index.embed_api_base={server.url}",
        )
        built = run(*remote, "build", str(root), "--no-llm", "--format", "json")
        assert built["index"]["retrieval"] == "hybrid"  # type: ignore[index]
        server.dim, server.salt = 48, "another model"  # the same name answers like another model

        # Before anything is embedded again: retrieval reads lexical and says why.
        found = run(*remote, "retrieve", "--repo", str(root), *question)
        assert found["retrieval"] == "lexical" and found["items"]
        assert "48" in str(found["note"]) and "32" in str(found["note"])
        status = run(*remote, "status", "--repo", str(root), "--format", "json")
        assert status["retrieval"] == "lexical" and "48" in str(status["note"])

        result = CliRunner().invoke(cli, [*remote, "refresh", str(root), "--full", "--no-llm", "--ci"])
        assert result.exit_code == 0, result.output
        refreshed = json.loads(result.output)
        assert refreshed["build"]["retrieval"] == "hybrid", refreshed
        assert "set aside" in refreshed["build"]["note"] and refreshed["build"]["embedded"] > 0

        found = run(*remote, "retrieve", "--repo", str(root), *question)
        assert found["retrieval"] == "hybrid" and found["note"] == ""
        assert found["items"][0]["path"] == "shop/refunds.py"  # type: ignore[index]
        status = run(*remote, "status", "--repo", str(root), "--format", "json")
        assert status["retrieval"] == "hybrid"
        index = status["index"]
        assert isinstance(index, dict) and index["width"] == 48 and index["embedded"] == index["units"]
        note = str(status["note"])
        assert "set aside" in note and "48" in note and "32" in note
        assert vector_widths(Path(str(status["store"]))) == ({48}, {48})

        again = run(*remote, "build", str(root), "--no-llm", "--format", "json")
        assert again["index"] == {**again["index"], "retrieval": "hybrid", "embedded": 0}  # type: ignore[dict-item]
        assert vector_widths(Path(str(status["store"]))) == ({48}, {48})


@pytest.mark.slow
def test_a_model_answering_other_vectors_of_the_same_width_is_embedded_again(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root: Path = make_repo(SHOP)
    monkeypatch.setenv("KBC_LLM_API_KEY", "a-key-for-the-test")
    with embedding_server(dim=32) as server:
        remote = ("-c", "index.embed_model=openai/team-embedder", "-c", f"index.embed_api_base={server.url}")
        first = run(*remote, "build", str(root), "--no-llm", "--format", "json")
        assert first["index"]["retrieval"] == "hybrid"  # type: ignore[index]
        units = first["index"]["units"]  # type: ignore[index]
        server.salt = "another model"
        found = run(*remote, "retrieve", "--repo", str(root), "--format", "json", "refund")
        assert found["retrieval"] == "lexical" and "probe" in str(found["note"])
        # No file changed, but a refresh sees the vectors cannot serve the model's queries.
        result = CliRunner().invoke(cli, [*remote, "refresh", str(root), "--no-llm", "--ci"])
        assert result.exit_code == 0, result.output
        refreshed = json.loads(result.output)
        assert refreshed["path"] == "incremental" and "probe" in refreshed["reason"]
        assert refreshed["build"]["retrieval"] == "hybrid" and refreshed["build"]["embedded"] == units
        assert "set aside" in refreshed["build"]["note"]
        found = run(*remote, "retrieve", "--repo", str(root), "--format", "json", "refund")
        assert found["retrieval"] == "hybrid"
        result = CliRunner().invoke(cli, [*remote, "refresh", str(root), "--no-llm", "--ci"])
        assert json.loads(result.output)["path"] == "up-to-date", result.output


@pytest.mark.slow
def test_vectors_set_aside_are_embedded_again_after_the_build(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root: Path = make_repo(SHOP)
    monkeypatch.setenv("KBC_LLM_API_KEY", "a-key-for-the-test")
    with embedding_server(dim=32) as server:
        remote = ("-c", "index.embed_model=openai/team-embedder", "-c", f"index.embed_api_base={server.url}")
        run(*remote, "build", str(root), "--no-llm", "--format", "json")
        server.dim = 48
        built = run(*remote, "build", str(root), "--no-llm", "--no-wait", "--format", "json")
        index = built["index"]
        assert isinstance(index, dict) and index["retrieval"] == "lexical" and index["pending"] > 0
        assert "set aside" in str(index["note"])
        result = CliRunner().invoke(cli, [*remote, "embed", "--repo", str(root)])
        assert result.exit_code == 0 and "retrieval hybrid" in result.output, result.output
        found = run(*remote, "retrieve", "--repo", str(root), "--format", "json", "validate a refund")
        assert found["retrieval"] == "hybrid"
        status = run(*remote, "status", "--repo", str(root), "--format", "json")
        assert status["retrieval"] == "hybrid" and "set aside" in str(status["note"])
        assert vector_widths(Path(str(status["store"]))) == ({48}, {48})
