"""The index through a Chroma server (`chroma run` on loopback) when KBC_CHROMA_URL is set."""

import json
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import git, write_tree

from kbc.cli.main import cli

# Chroma's HTTP client keeps pooled connections open until garbage collection; they are
# its own, and closing them is not ours to do.
pytestmark = [
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def chroma_url(tmp_path: Path) -> Iterator[str]:
    executable = shutil.which("chroma")
    assert executable, "the chroma command comes with chromadb"
    port = free_port()
    log = (tmp_path / "chroma.log").open("w")
    server = subprocess.Popen(
        [
            executable,
            "run",
            "--path",
            str(tmp_path / "server-data"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise AssertionError((tmp_path / "chroma.log").read_text()) from None
                time.sleep(0.3)
        yield url
    finally:
        _release_chroma_clients()
        server.terminate()
        server.wait(timeout=30)
        log.close()


def _release_chroma_clients() -> None:
    """Drop Chroma's cached clients and collect their pooled sockets now, inside this test."""
    import gc
    import warnings

    from chromadb.api.client import SharedSystemClient

    SharedSystemClient.clear_system_cache()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


@pytest.mark.slow
def test_build_and_retrieve_through_a_chroma_server(
    tmp_path: Path, chroma_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    write_tree(
        root,
        {
            "calc/__init__.py": "",
            "calc/ops.py": 'def divide(a, b):\n    """Divide, refusing zero."""\n    if b == 0:\n'
            '        raise ZeroDivisionError("b is zero")\n    return a / b\n',
            "calc/text.py": "def shout(s):\n    return s.upper()\n",
        },
    )
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "calc")
    remote = ("-c", f"index.chroma_url={chroma_url}")
    runner = CliRunner()
    built = runner.invoke(cli, [*remote, "build", str(root), "--format", "json", "--workers", "1"])
    assert built.exit_code == 0, built.output
    index = json.loads(built.stdout)["index"]
    assert index["retrieval"] == "hybrid" and index["embedded"] == index["units"] > 0
    assert not (root / ".kbc" / "index" / "chroma").exists()

    import chromadb

    host, port = chroma_url.rsplit(":", 1)
    client = chromadb.HttpClient(host=host.split("//")[1], port=int(port))
    (collection,) = client.list_collections()
    assert collection.count() == index["units"]

    found = runner.invoke(
        cli,
        [
            *remote,
            "retrieve",
            "--repo",
            str(root),
            "--format",
            "json",
            "--budget",
            "500",
            "division by zero is refused",
        ],
    )
    assert found.exit_code == 0, found.output
    data = json.loads(found.output)
    assert data["retrieval"] == "hybrid"
    assert data["items"][0]["path"] == "calc/ops.py"
    del client, collection


@pytest.mark.slow
def test_a_workspace_keeps_every_repository_on_one_chroma_server(tmp_path: Path, chroma_url: str) -> None:
    from kbc.domain.settings import load_settings
    from kbc.domain.workspace import RepositoryEntry
    from kbc.services.fused import retrieve_across
    from kbc.services.workspace import Workspace

    remote = ("-c", f"index.chroma_url={chroma_url}")
    sources = {
        "calc": {
            "calc/__init__.py": "",
            "calc/ops.py": 'def divide(a, b):\n    """Divide, refusing zero."""\n    return a / b\n',
        },
        "words": {
            "words/__init__.py": "",
            "words/case.py": 'def shout(s):\n    """Upper-case a sentence."""\n    return s.upper()\n',
        },
    }
    roots = {}
    for name, files in sources.items():
        root = roots[name] = tmp_path / name
        root.mkdir()
        write_tree(root, files)
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", name)
        built = CliRunner().invoke(cli, [*remote, "build", str(root), "--format", "json", "--workers", "1"])
        assert built.exit_code == 0, built.output

    import chromadb

    host, port = chroma_url.rsplit(":", 1)
    client = chromadb.HttpClient(host=host.split("//")[1], port=int(port))
    assert len(client.list_collections()) == 2  # one collection per repository and model

    settings = load_settings(tmp_path, env={"KBC_CHROMA_URL": chroma_url, "KBC_CONFIG": ""})
    workspace = Workspace(
        [RepositoryEntry(n, str(p)) for n, p in roots.items()],
        settings,
        settings_for=lambda root: load_settings(root, env={"KBC_CHROMA_URL": chroma_url, "KBC_CONFIG": ""}),
    )
    try:
        found = retrieve_across(workspace, "upper-case a sentence", budget=400)
    finally:
        workspace.close()
    assert found["retrieval"] == "hybrid" and {r["retrieval"] for r in found["repositories"]} == {"hybrid"}
    assert found["items"][0]["repository"] == "words" and found["items"][0]["path"] == "words/case.py"
    del client


@pytest.mark.slow
def test_a_servers_collection_of_another_width_is_set_aside_there(
    tmp_path: Path, chroma_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from llm_server import embedding_server

    root = tmp_path / "repo"
    root.mkdir()
    write_tree(root, {"calc/__init__.py": "", "calc/ops.py": 'def divide(a, b):\n    """Divide."""\n'})
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "calc")
    monkeypatch.setenv("KBC_LLM_API_KEY", "a-key-for-the-test")
    runner = CliRunner()
    with embedding_server(dim=32) as server:
        remote = (
            *("-c", f"index.chroma_url={chroma_url}", "-c", "index.embed_model=openai/team-embedder"),
            *("-c", f"index.embed_api_base={server.url}"),
        )
        first = runner.invoke(cli, [*remote, "build", str(root), "--format", "json", "--workers", "1"])
        assert first.exit_code == 0, first.output
        server.dim = 48
        built = runner.invoke(cli, [*remote, "build", str(root), "--format", "json", "--workers", "1"])
        assert built.exit_code == 0, built.output
        index = json.loads(built.stdout)["index"]
        assert index["retrieval"] == "hybrid" and index["embedded"] == index["units"]
        assert "set aside" in index["note"] and "on the Chroma server" in index["note"]
        found = runner.invoke(cli, [*remote, "retrieve", "--repo", str(root), "--format", "json", "divide"])
        assert found.exit_code == 0 and json.loads(found.output)["retrieval"] == "hybrid", found.output

    import chromadb

    host, port = chroma_url.rsplit(":", 1)
    client = chromadb.HttpClient(host=host.split("//")[1], port=int(port))
    widths = {
        c.name: {len(v) for v in client.get_collection(c.name).get(include=["embeddings"])["embeddings"]}
        for c in client.list_collections()
    }
    (aside,) = [name for name in widths if "-aside-" in name]
    (kept,) = [name for name in widths if name != aside]
    assert (widths[aside], widths[kept]) == ({32}, {48}) and aside.startswith(kept)
    del client
