"""A store published to S3-compatible storage (a loopback server) and served by `kbc serve`
processes that follow it: the same bytes from each, a new publication served by both without a
failed request, and nothing served but complete publications of this kbc, the last good one
kept while the store cannot be read."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import LEXICAL, git, until
from s3_server import BUCKET, S3, s3_server
from web import STORE, built_repository, serving

from kbc.services.publication import store_files

KBC = [sys.executable, "-m", "kbc", *LEXICAL]
POLL = ("-c", "serve.publication_poll=1")
TASK = {"task": "how is a refund validated against what was paid", "budget": 2000}
LOCATION = f"s3://{BUCKET}/stores"
PUBLISHED = f"shop={LOCATION}/shop"


def kbc(*args: str, s3: S3, key: int = 1) -> subprocess.CompletedProcess[str]:
    """The kbc command line as a CI job runs it, with the user's AWS variables only."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KBC_", "AWS_"))}
    env.update(s3.env(key), KBC_CONFIG="")
    return subprocess.run([*KBC, *args], env=env, capture_output=True, text=True, check=False)


def publish(root: Path, s3: S3) -> dict[str, Any]:
    done = kbc("publish", "--repo", str(root), "--name", "shop", "--format", "json", LOCATION, s3=s3)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def listed(url: str) -> dict[str, Any]:
    return dict(httpx.get(f"{url}/api/v1/repositories", timeout=10).json()[0])


def without_query_id(body: bytes) -> bytes:
    """A slice's bytes but the id of the query in the answering server's own log."""
    return re.sub(rb'\n "query_id": "[^"]*",?', b"", body)


def slice_bytes(url: str) -> bytes:
    answer = httpx.post(f"{url}/api/v1/retrieve", json=TASK, timeout=30)
    assert answer.status_code == 200, answer.text
    return without_query_id(answer.content)


def serving_commit(url: str, commit: str) -> bool:
    found = listed(url)
    return found["status"] == "ready" and found["commit"] == commit


@pytest.fixture
def servers_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in [k for k in os.environ if k.startswith("AWS_")]:
        monkeypatch.delenv(key)


@pytest.mark.slow
def test_two_servers_follow_one_bucket_and_switch_without_a_failed_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, servers_env: None
) -> None:
    with s3_server(tmp_path) as s3, built_repository(tmp_path, STORE) as root:
        first = publish(root, s3)
        assert first["uploaded"] == first["files"] > 0
        again = publish(root, s3)  # nothing changed: nothing sent again, the same publication
        assert (again["uploaded"], again["kept"], again["publication"]) == (
            0,
            first["files"],
            first["publication"],
        )
        for key, value in s3.env(0).items():
            monkeypatch.setenv(key, value)
        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        with (
            serving(PUBLISHED, folder=tmp_path / "a", options=POLL) as one,
            serving(PUBLISHED, folder=tmp_path / "b", options=POLL) as two,
        ):
            commit = git(root, "rev-parse", "HEAD").strip()
            until(lambda: serving_commit(one, commit) and serving_commit(two, commit), 60)
            before = slice_bytes(one)
            assert slice_bytes(two) == before
            assert b"validate_refund" in before

            answers: list[tuple[int, bytes]] = []
            stop = threading.Event()

            def stream() -> None:
                with httpx.Client(timeout=30) as client:
                    turn = 0
                    while not stop.is_set():
                        url = (one, two)[turn % 2]
                        turn += 1
                        try:
                            answer = client.post(f"{url}/api/v1/retrieve", json=TASK)
                            answers.append((answer.status_code, without_query_id(answer.content)))
                        except httpx.HTTPError as exc:
                            answers.append((0, repr(exc).encode()))

            streaming = threading.Thread(target=stream)
            streaming.start()
            try:
                refunds = root / "store" / "payments" / "refunds.py"
                refunds.write_text(
                    refunds.read_text() + "\n\ndef refund_fee(amount: int) -> int:\n"
                    '    """The fee kept when a refund is validated: two percent."""\n'
                    "    return amount // 50\n"
                )
                git(root, "commit", "-qam", "a refund fee")
                refreshed = kbc("refresh", "--ci", str(root), s3=s3)
                assert refreshed.returncode == 0, refreshed.stdout + refreshed.stderr
                second = publish(root, s3)
                assert 0 < second["uploaded"] < second["files"]  # only what changed is sent
                new = git(root, "rev-parse", "HEAD").strip()
                until(lambda: serving_commit(one, new) and serving_commit(two, new), 60)
                settled = len(answers)
                until(lambda: len(answers) >= settled + 4, 60)  # a few answered after both switched
            finally:
                stop.set()
                streaming.join(timeout=60)
            after = slice_bytes(one)
            assert slice_bytes(two) == after != before
            assert b"refund_fee" in after
            failed = [(status, body[:200]) for status, body in answers if status != 200]
            assert not failed
            assert {body for _, body in answers} <= {before, after}  # never a mix of the two
            assert before in {body for _, body in answers}
            assert after in {body for _, body in answers}


def put_manifest(s3: S3, manifest: dict[str, Any]) -> None:
    s3.client().put_object(Bucket=BUCKET, Key="stores/shop/manifest.json", Body=json.dumps(manifest).encode())


def looked_since(url: str, moment: float) -> bool:
    """Whether the server has looked at the store (twice) since ``moment``."""
    text = httpx.get(f"{url}/metrics", timeout=10).text
    line = next(x for x in text.splitlines() if x.startswith("kbc_publication_checked_timestamp_seconds"))
    return float(line.rsplit(" ", 1)[1]) > moment + 1.5


@pytest.mark.slow
def test_only_complete_publications_of_this_kbc_are_served_and_the_last_good_one_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, servers_env: None
) -> None:
    import time

    with s3_server(tmp_path) as s3, built_repository(tmp_path, STORE) as root:
        good = publish(root, s3)
        manifest = json.loads(
            s3.client().get_object(Bucket=BUCKET, Key="stores/shop/manifest.json")["Body"].read()
        )
        for key, value in s3.env(0).items():
            monkeypatch.setenv(key, value)
        with serving(PUBLISHED, folder=tmp_path, options=POLL) as url:
            commit = good["commit"]
            until(lambda: serving_commit(url, commit), 60)
            served = slice_bytes(url)

            # Killed half-way: the objects of a new build are there, its manifest is not.
            (root / "store" / "extra.py").write_text('"""An extra module."""\n')
            git(root, "add", "-A")
            git(root, "commit", "-qm", "an extra module")
            assert kbc("refresh", str(root), s3=s3).returncode == 0
            for relative in store_files(root / ".kbc"):
                data = (root / ".kbc" / relative).read_bytes()
                key = "stores/shop/objects/" + hashlib.sha256(data).hexdigest()
                s3.client().put_object(Bucket=BUCKET, Key=key, Body=data)
            moment = time.time()
            until(lambda: looked_since(url, moment), 60)
            assert listed(url)["commit"] == commit and listed(url)["problem"] == ""

            # A manifest naming an object that is not there (or not what it says): never served.
            broken = dict(
                manifest, files=[*manifest["files"], {"path": "index/x.json", "sha256": "1" * 64, "size": 3}]
            )
            put_manifest(s3, broken)
            found = until(lambda: listed(url)["problem"], 60)
            assert "missing" in found and f"serving publication {good['publication']}" in found
            assert listed(url)["commit"] == commit and slice_bytes(url) == served

            # Another kbc's publication: refused, saying so.
            put_manifest(s3, dict(manifest, kbc="0.0.1-other"))
            found = until(lambda: "kbc 0.0.1-other" in listed(url)["problem"] and listed(url)["problem"], 60)
            assert "serves only publications of its own version" in found
            assert slice_bytes(url) == served

            # The server's key is revoked: the last good publication is served, and why is said.
            put_manifest(s3, manifest)
            until(lambda: listed(url)["problem"] == "", 60)
            s3.revoke(0)
            found = until(
                lambda: "credentials were refused" in listed(url)["problem"] and listed(url)["problem"], 60
            )
            assert "InvalidAccessKeyId" in found
            metrics = httpx.get(f"{url}/metrics", timeout=10).text
            assert 'kbc_publication_ok{repository="shop"} 0.0' in metrics
            assert "credentials were refused" in metrics
            assert listed(url)["status"] == "ready" and slice_bytes(url) == served
