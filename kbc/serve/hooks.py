"""Push webhooks, ``POST /api/v1/hooks/push``: GitHub's and GitLab's push events queue a
refresh of the served URL repository they name, off the request path.

A webhook carries no bearer token; it proves itself with the shared secret of
``serve.webhook_secret`` (the user's configuration or ``KBC_WEBHOOK_SECRET``): GitHub's
``X-Hub-Signature-256`` (an HMAC-SHA256 of the body), GitLab's ``X-Gitlab-Token`` (the
secret itself). Without a secret configured every webhook is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from kbc.domain.errors import KbcError
from kbc.serve.worker import Worker

HOOK_PATH = "/hooks/push"
URL_KEYS = (
    "clone_url",
    "git_url",
    "ssh_url",
    "html_url",
    "url",
    "git_http_url",
    "git_ssh_url",
    "web_url",
    "http_url",
)


def _error(status: int, message: str, hint: str = "") -> JSONResponse:
    return JSONResponse({"error": message, "hint": hint}, status_code=status)


def verified(headers: Any, body: bytes, secret: str) -> str:
    """Which forge signed ``body`` with ``secret`` ("github" or "gitlab"); "" if none did."""
    signature = headers.get("x-hub-signature-256", "")
    if signature:
        expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        return "github" if hmac.compare_digest(signature.strip(), expected) else ""
    token = headers.get("x-gitlab-token", "")
    if token:
        return "gitlab" if hmac.compare_digest(token.encode(), secret.encode()) else ""
    return ""


def parsed(body: bytes) -> Any:
    """``body`` read as JSON; a :class:`KbcError` saying why it cannot be, whatever the reason."""
    try:
        return json.loads(body)
    except RecursionError:
        raise KbcError(
            "the payload is nested too deeply to read",
            hint="a push event nests a few levels; send the one the forge sends",
        ) from None
    except ValueError:  # not JSON, or not in a Unicode encoding
        raise KbcError(
            "the payload is not JSON", hint="set the webhook's content type to application/json"
        ) from None


def push_of(payload: Any) -> tuple[list[str], str, str]:
    """A push event's repository URLs, branch and new commit."""
    if not isinstance(payload, dict):
        raise KbcError("the payload is not a JSON object")
    urls: list[str] = []
    for key in ("repository", "project"):
        about = payload.get(key)
        if isinstance(about, dict):
            urls += [str(about[k]) for k in URL_KEYS if isinstance(about.get(k), str) and about[k]]
    ref = payload.get("ref")
    branch = ref.removeprefix("refs/heads/") if isinstance(ref, str) and ref.startswith("refs/heads/") else ""
    after = payload.get("after") if isinstance(payload.get("after"), str) else ""
    if not urls:
        raise KbcError(
            "the payload names no repository URL",
            hint="send a GitHub or GitLab push event (repository.clone_url, project.git_http_url)",
        )
    return urls, branch, str(after)


def push_hook(
    worker: Worker, read: Callable[[Request], Awaitable[bytes]]
) -> Callable[[Request], Awaitable[Response]]:
    """The handler of push webhooks; ``read`` reads a request's body within the API's limits."""

    async def handle(request: Request) -> Response:
        secret = worker.workspace.settings.webhook_secret
        if not secret:
            return _error(
                403,
                "push webhooks are off: no webhook secret is configured",
                "set serve.webhook_secret in your configuration (or KBC_WEBHOOK_SECRET) and "
                "give the forge the same secret",
            )
        try:
            body = await read(request)
        except KbcError as error:
            return _error(413 if "bytes" in error.message else 400, error.message, error.hint)
        forge = verified(request.headers, body, secret)
        if not forge:
            return _error(
                401,
                "the webhook's signature or token does not match the configured secret",
                "give the forge the secret of serve.webhook_secret",
            )
        event = request.headers.get("x-github-event") or request.headers.get("x-gitlab-event") or ""
        if event == "ping":
            return JSONResponse({"ok": True, "forge": forge, "queued": []})
        if event not in ("push", "Push Hook"):
            return JSONResponse(
                {
                    "ok": True,
                    "forge": forge,
                    "queued": [],
                    "note": f"event {event[:40]!r} ignored: only pushes refresh",
                }
            )
        try:
            urls, branch, after = push_of(parsed(body))
        except KbcError as error:
            return _error(400, error.message, error.hint)
        queued = worker.workspace.pushed_to(urls, branch, after)
        if not queued:
            return JSONResponse(
                {
                    "ok": True,
                    "forge": forge,
                    "queued": [],
                    "note": f"no served URL repository follows {urls[0]} on {branch or 'that ref'}",
                }
            )
        return JSONResponse({"ok": True, "forge": forge, "queued": queued}, status_code=202)

    return handle
