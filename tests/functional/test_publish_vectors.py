"""A store with its local vectors, published and served: the Chroma folder travels in the
publication (its database copied through SQLite's backup), and the server's retrieval is
hybrid, the same slice as from the store it was published from."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import repo_factory
from s3_server import BUCKET, s3_server

from kbc.domain.settings import Settings
from kbc.domain.workspace import RepositoryEntry
from kbc.services.knowledge import KnowledgeBase
from kbc.services.workspace import Workspace

REFUNDS = '''"""Refunds."""


def validate_refund(amount: int, paid: int) -> bool:
    """A refund may not exceed what was paid."""
    return 0 < amount <= paid
'''
TASK = "check that money given back is not more than the customer paid"


@pytest.mark.slow
def test_local_vectors_are_published_and_served_hybrid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in [k for k in os.environ if k.startswith(("KBC_", "AWS_"))]:
        monkeypatch.delenv(key)
    root = repo_factory(tmp_path)({"shop/__init__.py": "", "shop/refunds.py": REFUNDS})
    with s3_server(tmp_path) as s3:
        env = {**os.environ, **s3.env(0), "KBC_CONFIG": ""}
        kbc = [sys.executable, "-m", "kbc"]
        subprocess.run([*kbc, "build", "--no-llm", str(root)], env=env, check=True, capture_output=True)
        done = subprocess.run(
            [*kbc, "publish", "--repo", str(root), "--name", "shop", f"s3://{BUCKET}/stores"],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        assert "publication" in done.stdout
        manifest = json.loads(
            s3.client().get_object(Bucket=BUCKET, Key="stores/shop/manifest.json")["Body"].read()
        )
        assert manifest["vectors"] == "store"
        assert "index/chroma/chroma.sqlite3" in {f["path"] for f in manifest["files"]}
        with KnowledgeBase(root, settings=Settings()) as kb:
            local = kb.retrieve(TASK)
        for key, value in s3.env(0).items():
            monkeypatch.setenv(key, value)
        workspace = Workspace(
            [RepositoryEntry("shop", published=f"s3://{BUCKET}/stores/shop")],
            Settings(data_dir=str(tmp_path / "data")),
        )
        try:
            workspace.refresh_now("shop")
            assert workspace.listing()[0]["problem"] == ""
            with workspace.using("shop") as kb:
                served = kb.retrieve(TASK)
        finally:
            workspace.close()
        assert served.retrieval == local.retrieval == "hybrid"
        assert served.to_json() == local.to_json()
