"""S3-compatible object storage, the one module that imports boto3 (imported on first use: it
takes a while, and only ``kbc publish`` and servers of a publication need it).

Credentials, region and endpoint come from the user's environment and configuration as boto3
reads them (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``,
``AWS_PROFILE``, ``AWS_DEFAULT_REGION``, ``AWS_ENDPOINT_URL`` and ``~/.aws/``), never from the
repository. Every failure is an :class:`ObjectStoreError` that says which kind it is (the
credentials refused, the store unreachable, the bucket missing), without the credentials."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kbc.domain.errors import KbcError, StoreError

SCHEME = "s3://"
CONNECT_SECONDS = 5
READ_SECONDS = 60
ATTEMPTS = 3
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_REFUSED = {
    "AccessDenied",
    "ExpiredToken",
    "InvalidAccessKeyId",
    "InvalidClientTokenId",
    "InvalidToken",
    "SignatureDoesNotMatch",
    "403",
}
_MISSING = {"NoSuchKey", "404", "NotFound"}


class ObjectStoreError(StoreError):
    """Object storage could not be used; ``kind``: ``credentials``, ``unreachable``,
    ``bucket`` (no such bucket) or ``other``."""

    def __init__(self, message: str, *, kind: str, hint: str = "") -> None:
        super().__init__(message, hint=hint)
        self.kind = kind


@dataclass(frozen=True, slots=True)
class Location:
    """``s3://bucket/prefix``: a bucket and a key prefix (no leading or trailing slash)."""

    bucket: str
    prefix: str = ""

    def key(self, *parts: str) -> str:
        return "/".join(p for p in (self.prefix, *parts) if p)

    def below(self, name: str) -> Location:
        return Location(self.bucket, self.key(name))

    def __str__(self) -> str:
        return f"{SCHEME}{self.bucket}/{self.prefix}".rstrip("/")


def is_location(text: str) -> bool:
    return text.strip().lower().startswith(SCHEME)


def parse_location(text: str) -> Location:
    """``s3://bucket[/prefix]`` as a :class:`Location`; anything else is refused, saying why."""
    hint = "write s3://BUCKET/PREFIX (the endpoint comes from AWS_ENDPOINT_URL or ~/.aws/config)"
    if not is_location(text):
        raise KbcError(f"{text!r} is not an s3:// location", hint=hint)
    bucket, _, prefix = text.strip()[len(SCHEME) :].partition("/")
    parts = [p for p in prefix.split("/") if p]
    if not _BUCKET.match(bucket) or any(p in (".", "..") or "\\" in p for p in parts):
        raise KbcError(f"{text!r} names no usable bucket and prefix", hint=hint)
    return Location(bucket, "/".join(parts))


class Bucket:
    """One bucket, reached with the user's credentials; the client is made on first use, and
    made again after a failure (credentials fixed meanwhile are then read again)."""

    def __init__(self, location: Location) -> None:
        self.location = location
        self._client: Any = None

    def _s3(self) -> Any:
        if self._client is None:
            import boto3
            from botocore.config import Config

            config = Config(
                connect_timeout=CONNECT_SECONDS,
                read_timeout=READ_SECONDS,
                retries={"max_attempts": ATTEMPTS, "mode": "standard"},
            )
            self._client = boto3.session.Session().client("s3", config=config)
        return self._client

    def exists(self, key: str) -> bool:
        try:
            self._s3().head_object(Bucket=self.location.bucket, Key=key)
        except Exception as exc:
            if _code(exc) in _MISSING:
                return False
            raise self._failed(exc, f"looking for {key}") from None
        return True

    def put_file(self, key: str, path: Path) -> None:
        try:
            with path.open("rb") as handle:
                self._s3().put_object(Bucket=self.location.bucket, Key=key, Body=handle)
        except Exception as exc:
            raise self._failed(exc, f"writing {key}") from None

    def put_bytes(self, key: str, data: bytes) -> None:
        try:
            self._s3().put_object(Bucket=self.location.bucket, Key=key, Body=data)
        except Exception as exc:
            raise self._failed(exc, f"writing {key}") from None

    def get_bytes(self, key: str) -> bytes | None:
        """The object's bytes; None when there is no such object."""
        try:
            answer = self._s3().get_object(Bucket=self.location.bucket, Key=key)
            return bytes(answer["Body"].read())
        except Exception as exc:
            if _code(exc) in _MISSING:
                return None
            raise self._failed(exc, f"reading {key}") from None

    def download(self, key: str, path: Path) -> bool:
        """The object written to ``path``; False when there is no such object."""
        data = self.get_bytes(key)
        if data is None:
            return False
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return True

    def _failed(self, exc: Exception, doing: str) -> ObjectStoreError:
        self._client = None
        where = f"{self.location} ({doing})"
        name = type(exc).__name__
        kinds = {c.__name__ for c in type(exc).__mro__}
        code = _code(exc)
        if kinds & {"NoCredentialsError", "PartialCredentialsError"} or code in _REFUSED:
            return ObjectStoreError(
                f"{where}: the credentials were refused ({code or name})",
                kind="credentials",
                hint="set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) to a key "
                "allowed to read and write the bucket",
            )
        if code == "NoSuchBucket":
            return ObjectStoreError(
                f"{where}: no such bucket", kind="bucket", hint="create the bucket, or name another"
            )
        if kinds & {"ConnectionError", "HTTPClientError", "ConnectTimeoutError", "ReadTimeoutError"}:
            return ObjectStoreError(
                f"{where}: the object store is unreachable ({name})",
                kind="unreachable",
                hint="check AWS_ENDPOINT_URL (or the endpoint in ~/.aws/config) and the network",
            )
        return ObjectStoreError(
            f"{where}: {code or name}: {_first_line(exc)}", kind="other", hint="see the object store's logs"
        )


def _code(exc: Exception) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code", ""))
    return ""


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else ""
