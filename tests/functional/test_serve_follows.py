"""A running MCP server answers from the newest completed build, and a slow call never holds
up the others."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from helpers import LEXICAL, git, repo_factory
from llm_server import Reply, chat_server
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import TextContent

SERVE = (
    "import sys\nfrom kbc.services.components import Components\n"
    "from kbc.services.knowledge import KnowledgeBase\nfrom kbc.serve.run import serve\n"
    "serve(KnowledgeBase(sys.argv[1], components=Components.lexical()), 'stdio')\n"
)
KBC = [sys.executable, "-m", "kbc", *LEXICAL]
PREAMBLE = "".join(f"# note {i}: nothing to see here\n" for i in range(40))
REFUNDS = '''def validate_refund(amount, paid):
    """A refund may not exceed what was paid."""
    if amount > paid:
        raise ValueError("refund exceeds payment")
    return True
'''


def clean_env(**extra: str) -> dict[str, str]:
    """A process's environment: none of the test runner's kbc settings, and ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KBC_")}
    return {**env, "KBC_CONFIG": "", **extra}


def text_of(result: Any) -> Any:
    """A call's data: its structured content (a slice's text content is the slice itself)."""
    assert not result.is_error, result.content
    assert isinstance(result.content[0], TextContent)
    return result.structured_content


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = repo_factory(tmp_path)({"shop/__init__.py": "", "shop/refunds.py": PREAMBLE + REFUNDS})
    subprocess.run([*KBC, "build", "--no-llm", str(root)], check=True, env=clean_env(), capture_output=True)
    return root


@pytest.mark.slow
def test_a_running_server_answers_from_a_build_made_by_another_process(repo: Path) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-c", SERVE, str(repo)], env=clean_env())
    task = "validate_refund raises when the refund exceeds the payment"

    async def main() -> None:
        with (repo.parent / "server.log").open("w") as log:
            async with (
                stdio_client(params, errlog=log) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                before = text_of(await session.call_tool("retrieve_slice", {"task": task}))
                assert any(i["path"] == "shop/refunds.py" and i["end_line"] > 40 for i in before["items"])
                (repo / "shop" / "refunds.py").write_text(REFUNDS)  # the 40 lines on top are gone
                git(repo, "commit", "-qam", "drop the preamble")
                subprocess.run([*KBC, "refresh", str(repo)], check=True, env=clean_env(), capture_output=True)
                after = text_of(await session.call_tool("retrieve_slice", {"task": task}))
                assert after["fingerprint"] != before["fingerprint"]
                for item in (i for i in after["items"] if not i["path"].startswith("@views/")):
                    served = text_of(
                        await session.call_tool(
                            "get_file",
                            {"path": item["path"], "start": item["start_line"], "end": item["end_line"]},
                        )
                    )
                    assert served["text"].strip() and served["text"].strip() in after["text"]
                ours = [i for i in after["items"] if i["path"] == "shop/refunds.py"]
                assert ours and all(i["end_line"] <= 5 for i in ours)

    anyio.run(main)


@pytest.mark.slow
def test_a_slow_answer_does_not_hold_up_other_calls(repo: Path) -> None:
    with chat_server(lambda _r: Reply("It is validated [shop/refunds.py:41-45].", delay=6)) as llm:
        env = clean_env(
            KBC_LLM_MODEL="openai/test-model",
            KBC_LLM_API_BASE=llm.url,
            KBC_LLM_API_KEY="k",
            KBC_LLM_RETRIES="0",
        )
        params = StdioServerParameters(command=sys.executable, args=["-c", SERVE, str(repo)], env=env)
        finished: list[str] = []

        async def main() -> None:
            with (repo.parent / "server.log").open("w") as log:
                async with (
                    stdio_client(params, errlog=log) as (read, write),
                    ClientSession(read, write) as session,
                ):
                    await session.initialize()

                    async def ask() -> None:
                        text_of(await session.call_tool("ask", {"question": "how are refunds validated?"}))
                        finished.append("ask")

                    async def read_file() -> None:
                        while llm.calls() == 0:  # the answer is being written
                            await anyio.sleep(0.05)
                        text_of(await session.call_tool("get_file", {"path": "shop/refunds.py"}))
                        text_of(await session.call_tool("list_views", {}))
                        finished.append("get_file")

                    async with anyio.create_task_group() as group:
                        group.start_soon(ask)
                        group.start_soon(read_file)

        anyio.run(main)
    assert finished == ["get_file", "ask"]


@pytest.mark.slow
def test_a_request_reads_one_build_while_another_completes(repo: Path) -> None:
    from kbc.retrieval.profiles import load_profiles
    from kbc.services.components import Components
    from kbc.services.knowledge import KnowledgeBase

    with KnowledgeBase(repo, components=Components.lexical()) as kb:
        retriever = kb.served.retriever()  # what a request in flight holds
        (repo / "shop" / "refunds.py").write_text(REFUNDS.replace("refund exceeds payment", "too much"))
        git(repo, "commit", "-qam", "reword")
        subprocess.run([*KBC, "refresh", str(repo)], check=True, env=clean_env(), capture_output=True)
        ranking = retriever.search("refund exceeds payment", load_profiles(repo)["implementation"])
        texts = "".join(chunk.text for chunk in ranking.chunks.values())
        assert "refund exceeds payment" in texts and "too much" not in texts  # the old build, whole
        assert kb.served.retriever() is not retriever  # the next request reads the new one
        ranking = kb.served.retriever().search("too much", load_profiles(repo)["implementation"])
        assert "too much" in "".join(chunk.text for chunk in ranking.chunks.values())
