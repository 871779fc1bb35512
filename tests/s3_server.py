"""An S3-compatible server on loopback (moto's, in a process of its own) that checks
credentials: two access keys of one user allowed everything, made before checking starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BUCKET = "kbc-stores"
REGION = "us-east-1"
SETUP_ACTIONS = 4  # the requests below that make the user, its policy and its two keys
ALLOW_ALL = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}


@dataclass(frozen=True)
class S3:
    endpoint: str
    keys: tuple[dict[str, str], ...]  # the user's two access keys (AccessKeyId, SecretAccessKey)

    def env(self, key: int = 0) -> dict[str, str]:
        """The AWS variables a client of this server runs with, signing with key ``key``."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.keys[key]["AccessKeyId"],
            "AWS_SECRET_ACCESS_KEY": self.keys[key]["SecretAccessKey"],
            "AWS_DEFAULT_REGION": REGION,
        }

    def client(self, service: str = "s3", key: int = 1) -> Any:
        import boto3

        return boto3.session.Session().client(
            service,
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id=self.keys[key]["AccessKeyId"],
            aws_secret_access_key=self.keys[key]["SecretAccessKey"],
        )

    def revoke(self, key: int) -> None:
        """Delete access key ``key`` (signed with the other one)."""
        self.client("iam", key=1 - key).delete_access_key(
            UserName="kbc", AccessKeyId=self.keys[key]["AccessKeyId"]
        )


@contextmanager
def s3_server(folder: Path) -> Iterator[S3]:
    """The server, with the bucket :data:`BUCKET` made; stopped when the block ends."""
    import boto3
    from web import free_port

    port = free_port()
    env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": str(SETUP_ACTIONS)}
    log_path = folder / "moto.log"
    with log_path.open("w") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
            env=env,
        )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        iam = boto3.session.Session().client(
            "iam",
            endpoint_url=endpoint,
            region_name=REGION,
            aws_access_key_id="setup",
            aws_secret_access_key="setup",
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                iam.create_user(UserName="kbc")
                break
            except Exception:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"the S3 server did not start: {log_path.read_text()}") from None
                time.sleep(0.2)
        iam.put_user_policy(UserName="kbc", PolicyName="all", PolicyDocument=json.dumps(ALLOW_ALL))
        keys = tuple(iam.create_access_key(UserName="kbc")["AccessKey"] for _ in range(2))
        found = S3(endpoint, tuple({k: key[k] for k in ("AccessKeyId", "SecretAccessKey")} for key in keys))
        found.client().create_bucket(Bucket=BUCKET)
        yield found
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
