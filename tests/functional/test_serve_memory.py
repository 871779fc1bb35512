"""What a server holds: the embedding runtime and the build machinery are loaded only when a
request needs them, and a bounded cache of answered slices gives the same bytes as none."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import RepoFactory

from kbc.cli.main import cli
from kbc.domain.settings import Settings
from kbc.services.components import Components
from kbc.services.knowledge import KnowledgeBase

CODE = {
    "shop/__init__.py": '"""A shop."""\n',
    "shop/payouts.py": '''
        """Payouts to sellers."""


        def schedule_payout(seller, amount_cents):
            """Schedule a payout of an amount in cents, after the refund window."""
            return {"seller": seller, "amount": amount_cents}
    ''',
    "shop/refunds.py": '''
        """Refunds of orders."""


        def refund(order, reason):
            """Refund an order within its refund window, or refuse it."""
            return order.total if reason else 0
    ''',
}
TASKS = ("schedule a payout to a seller", "refund an order inside the window", "cents of an amount")
EMBEDDING_RUNTIME = ("onnxruntime", "fastembed")
BUILD_MACHINERY = ("libcst", "networkx", "kbc.services.build", "kbc.analyzers.python.analyze")

# The server as `kbc serve` starts it, in a thread of a process that reports which modules it
# holds once it answers, and again after one retrieve.
SERVER = textwrap.dedent(
    """
    import json, os, socket, sys, threading, time
    import httpx
    from kbc.cli.main import cli

    repo, *config = sys.argv[1:]
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    args = [*config, "serve", "--transport", "http", "--port", str(port), "--repo", repo]
    threading.Thread(target=lambda: cli(args, standalone_mode=False), daemon=True).start()
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(url + "/api/v1/health").status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.1)
    report = {"started": sorted(sys.modules)}
    answer = httpx.post(url + "/api/v1/retrieve", json={"task": "schedule a payout"}, timeout=300)
    report["retrieval"] = answer.json()["retrieval"]
    report["answered"] = sorted(sys.modules)
    print(json.dumps(report), flush=True)
    os._exit(0)
    """
)


def served_modules(repo: Path, *config: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KBC_")}
    done = subprocess.run(
        [sys.executable, "-c", SERVER, str(repo), *config],
        capture_output=True,
        text=True,
        timeout=600,
        env={**env, "KBC_CONFIG": ""},
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.slow
def test_the_embedding_runtime_is_loaded_only_by_a_hybrid_request(make_repo: RepoFactory) -> None:
    root = make_repo(CODE)
    built = CliRunner().invoke(cli, ["build", str(root), "--no-llm", "--wait", "--workers", "1"])
    assert built.exit_code == 0, built.output

    hybrid = served_modules(root)
    assert hybrid["retrieval"] == "hybrid"
    started, answered = set(hybrid["started"]), set(hybrid["answered"])  # type: ignore[call-overload]
    assert not started & {*EMBEDDING_RUNTIME, *BUILD_MACHINERY}
    assert "onnxruntime" in answered  # the query was embedded
    assert not answered & set(BUILD_MACHINERY)

    lexical = served_modules(root, "-c", "index.embed_model=none")
    assert lexical["retrieval"] == "lexical"
    assert not set(lexical["answered"]) & {*EMBEDDING_RUNTIME, *BUILD_MACHINERY}  # type: ignore[call-overload]


def test_a_bounded_cache_answers_the_same_bytes_as_no_cache(make_repo: RepoFactory) -> None:
    root = make_repo(CODE)
    KnowledgeBase(root, settings=Settings(embed_model="none"), components=Components.lexical()).build(
        no_llm=True
    )

    def answers(cache_mb: int) -> tuple[list[str], int]:
        settings = Settings(embed_model="none", cache_mb=cache_mb)
        kb = KnowledgeBase(root, settings=settings, components=Components.lexical())
        try:
            texts = [kb.retrieve(task).text for task in (*TASKS, *TASKS)]
            return texts, kb.served.cache_hits
        finally:
            kb.close()

    kept, hits = answers(8)
    none, no_hits = answers(0)
    assert kept == none and kept[: len(TASKS)] == kept[len(TASKS) :]
    assert (hits, no_hits) == (len(TASKS), 0)  # the repeats came from the cache, or were ranked again
