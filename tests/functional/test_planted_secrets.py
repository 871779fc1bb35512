"""A repository with credentials planted in 45 forms: none reaches a store file, an LLM prompt,
an output of the CLI, a rendered view or an answer of the MCP server."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from helpers import LEXICAL, repo_factory
from llm_server import ChatServer, Reply, chat_server
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import TextContent
from planted import planted

from kbc.cli.main import cli

FILES, VALUES = planted()
QUERIES = (
    "api key settings",
    "database password",
    "how do I set the openai key before running",
    "deploy docker token",
    "notebook login huggingface",
    "private key signing",
    "yaml values tls",
    "staging password dashboard",
    "npm registry auth",
    "claude demo key",
)


def leaks(text: str) -> list[str]:
    """The planted forms whose value is in ``text`` (also as the index's lower-cased tokens)."""
    lowered = text.lower()
    return [name for name, value in VALUES.items() if value in text or value.lower() in lowered]


def llm(server: ChatServer) -> tuple[str, ...]:
    """``kbc -c …``: the LLM on loopback writes the views' prose and the answers."""
    return (
        "-c",
        "llm.model=openai/test-model",
        "-c",
        f"llm.api_base={server.url}",
        "-c",
        "llm.api_key=k",
        "-c",
        "llm.retries=0",
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, ChatServer]]:
    """The corpus built hybrid, with views written by an LLM on loopback (every prompt kept)."""
    with pytest.MonkeyPatch.context() as mp, chat_server(lambda _r: Reply("{}")) as server:
        for key in [k for k in os.environ if k.startswith("KBC_")]:
            mp.delenv(key)  # only this test's configuration
        mp.setenv("KBC_CONFIG", "")
        root = repo_factory(tmp_path_factory.mktemp("planted"))(FILES)
        result = CliRunner().invoke(
            cli, [*llm(server), "build", str(root), "--format", "json", "--workers", "1"]
        )
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["index"]["retrieval"] == "hybrid"
        yield root, server


def test_the_corpus_plants_at_least_thirty_forms() -> None:
    assert len(VALUES) >= 30 and len(set(VALUES.values())) >= 30
    everything = "\n".join(FILES.values())
    assert not [name for name, value in VALUES.items() if value not in everything]


@pytest.mark.slow
def test_no_store_file_holds_a_planted_value(built: tuple[Path, ChatServer]) -> None:
    root, _ = built
    store = root / ".kbc"
    files = [p for p in store.rglob("*") if p.is_file()]
    assert any(p.name == "chroma.sqlite3" for p in files) and any(p.name == "lexical.sqlite" for p in files)
    for path in files:
        text = path.read_bytes().decode("utf-8", errors="replace")
        assert not leaks(text), f"{path.relative_to(store)} holds {leaks(text)}"


def test_no_prompt_sent_to_the_llm_holds_a_planted_value(built: tuple[Path, ChatServer]) -> None:
    _, server = built
    assert server.calls() > 0
    assert not leaks(json.dumps(server.requests))


@pytest.mark.slow
def test_no_cli_output_holds_a_planted_value(built: tuple[Path, ChatServer], tmp_path: Path) -> None:
    root, server = built
    runner = CliRunner()
    outputs = []
    for use_case in ("implementation", "architecture", "qa"):
        for query in QUERIES:
            for fmt in ("md", "json"):
                result = runner.invoke(
                    cli,
                    [
                        *llm(server),
                        "retrieve",
                        "--repo",
                        str(root),
                        "--use-case",
                        use_case,
                        "--budget",
                        "30000",
                        "--format",
                        fmt,
                        query,
                    ],
                )
                assert result.exit_code == 0, result.output
                outputs.append(result.output)
    assert "[REDACTED]" in "".join(outputs)
    asked = runner.invoke(cli, [*llm(server), "ask", "--repo", str(root), "what is the staging password?"])
    outputs.append(asked.output)
    outputs.append(json.dumps(server.requests))
    for command in (["views"], ["symbols", "settings"], ["gaps"], ["status"]):
        outputs.append(runner.invoke(cli, [*llm(server), *command, "--repo", str(root)]).output)
    rendered = tmp_path / "rendered"
    assert (
        runner.invoke(cli, [*llm(server), "render", "--repo", str(root), "--out", str(rendered)]).exit_code
        == 0
    )
    outputs += [p.read_text() for p in rendered.rglob("*.md")]
    assert not leaks("\n".join(outputs)), leaks("\n".join(outputs))


@pytest.mark.slow
def test_no_mcp_answer_holds_a_planted_value(built: tuple[Path, ChatServer]) -> None:
    root, _ = built
    script = (
        "import sys\nfrom kbc.services.knowledge import KnowledgeBase\n"
        "from kbc.serve.run import serve\nserve(KnowledgeBase(sys.argv[1]), 'stdio')\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("KBC_")}
    params = StdioServerParameters(
        command=sys.executable, args=["-c", script, str(root)], env={**env, "KBC_CONFIG": ""}
    )
    answers: list[str] = []

    async def call(session: ClientSession, tool: str, **arguments: Any) -> None:
        result = await session.call_tool(tool, arguments)
        answers.extend(c.text for c in result.content if isinstance(c, TextContent))

    async def main() -> None:
        with (root.parent / "mcp.log").open("w") as log:
            async with (
                stdio_client(params, errlog=log) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                for query in QUERIES:
                    await call(session, "search", query=query, k=50)
                    await call(session, "retrieve_slice", task=query, budget=30000)
                for path in FILES:
                    await call(session, "get_file", path=path)
                await call(session, "list_views")
                listed = json.loads(answers[-1])
                for view in listed:
                    await call(session, "get_view", id=view["id"])
                await call(session, "get_symbol", name="connect")

    anyio.run(main)
    assert any("[REDACTED]" in a for a in answers)
    assert not leaks("\n".join(answers)), leaks("\n".join(answers))


@pytest.mark.slow
def test_a_value_that_becomes_a_credential_elsewhere_is_redacted_in_unchanged_files(tmp_path: Path) -> None:
    from helpers import git

    value = "Xy7pQ2mN9vB4kL"
    root = repo_factory(tmp_path)(
        {"app/__init__.py": '"""App."""\n', "docs/notes.md": f"# Notes\n\nThe door code is {value}.\n"}
    )
    runner = CliRunner()
    assert runner.invoke(cli, [*LEXICAL, "build", str(root)]).exit_code == 0
    store = root / ".kbc"
    assert value in (store / "index" / "lexical.sqlite").read_bytes().decode("utf-8", "replace")
    (root / "app" / "settings.py").write_text(f'password = "{value}"\n')
    git(root, "add", "-A")
    git(root, "commit", "-qm", "settings")
    assert runner.invoke(cli, [*LEXICAL, "refresh", str(root)]).exit_code == 0
    for path in (p for p in store.rglob("*") if p.is_file()):
        assert value not in path.read_bytes().decode("utf-8", "replace"), path
    served = runner.invoke(cli, [*LEXICAL, "retrieve", "--repo", str(root), "door code notes"]).output
    assert "docs/notes.md" in served and "[REDACTED]" in served and value not in served
