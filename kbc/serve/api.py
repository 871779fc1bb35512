"""The REST API, ``/api/v1/…``: the same answers as the CLI's ``--format json`` and the MCP tools.

Every endpoint is declared once in :data:`kbc.serve.endpoints.ENDPOINTS`; the routes and the OpenAPI document
served at ``/api/v1/openapi.json`` are both made from that table, so the document cannot
drift from what is served. Errors are JSON, ``{"error": message, "hint": hint}``, with a
status that says what kind of error it is (see :func:`status_of`).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from kbc import __version__
from kbc.domain.errors import KbcError, LLMError, LockTimeout, NotFound, PathRefused, StoreError
from kbc.serve.endpoints import ENDPOINTS, PREFIX, REPOSITORY_PARAM, Endpoint
from kbc.serve.hooks import HOOK_PATH, push_hook
from kbc.serve.worker import Worker
from kbc.services.fused import named

__all__ = ["ENDPOINTS", "PREFIX", "error_response", "openapi_document", "routes", "status_of"]

MAX_BODY = 1_000_000  # bytes of a request body: a task is text, not a file upload
BODY_SECONDS = 30.0  # to send it, once the request's head is in


def status_of(error: KbcError) -> int:
    if isinstance(error, BodyTooLarge):
        return 413
    if isinstance(error, NotFound):
        return 404
    if isinstance(error, PathRefused):
        return 403
    if isinstance(error, (StoreError, LockTimeout)):
        return 503
    if isinstance(error, LLMError):
        return 502
    return 400


def error_response(status: int, message: str, hint: str = "") -> JSONResponse:
    return JSONResponse({"error": message, "hint": hint}, status_code=status)


def _json(data: Any) -> Response:
    body = json.dumps(data, indent=1, ensure_ascii=False).encode()
    return Response(body, media_type="application/json")


async def _arguments(endpoint: Endpoint, request: Request) -> dict[str, Any]:
    args: dict[str, Any] = {**request.query_params, **request.path_params}
    if endpoint.body is None:
        return args
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        # Also what keeps a web page from posting here: a JSON body needs a CORS preflight.
        raise KbcError("the body must be JSON", hint="send 'Content-Type: application/json'")
    raw = await read_body(request)
    try:
        model = endpoint.body.model_validate_json(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()
        )
        raise KbcError(
            f"bad request body: {problems}", hint=f"see {PREFIX}/openapi.json for the fields"
        ) from None
    return {**args, **model.model_dump()}


class BodyTooLarge(KbcError):
    """A request body past :data:`MAX_BODY`: refused by its declared length, or as soon as
    that many bytes have arrived, never read whole."""


async def read_body(request: Request) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.strip().isdigit():
            raise KbcError(f"Content-Length {declared[:40]!r} is not a number of bytes")
        if int(declared) > MAX_BODY:
            raise BodyTooLarge(
                f"the body has {int(declared)} bytes; at most {MAX_BODY} are read",
                hint="send the task as text, not a file",
            )
    parts: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(BODY_SECONDS):
            async for part in request.stream():
                size += len(part)
                if size > MAX_BODY:
                    raise BodyTooLarge(
                        f"the body has more than {MAX_BODY} bytes; at most {MAX_BODY} are read",
                        hint="send the task as text, not a file",
                    )
                parts.append(part)
    except TimeoutError:
        raise KbcError(
            f"the body did not arrive within {BODY_SECONDS:g} s", hint="send the whole request at once"
        ) from None
    return b"".join(parts)


async def _answer(endpoint: Endpoint, worker: Worker, args: dict[str, Any]) -> Any:
    """The endpoint's answer: about the whole workspace, across its repositories (several
    served, none named), or in the one named (or the only one)."""
    repository = str(args.get("repository") or "") or None
    workspace = worker.workspace
    whole, across = endpoint.whole, endpoint.across
    if whole is not None:
        return await worker.across(lambda w: whole(w, args))
    if across is not None and repository is None and workspace.single() is None:
        return await worker.across(lambda w: across(w, args))
    data = await worker.run(lambda kb: endpoint.answer(kb, args), repository)
    if across is None:
        return data
    name = workspace.chosen(repository)
    if isinstance(data, dict):
        return named(data, name, workspace)
    return data if workspace.single() is not None else [dict(entry, repository=name) for entry in data]


def _handler(endpoint: Endpoint, worker: Worker) -> Callable[[Request], Awaitable[Response]]:
    async def handle(request: Request) -> Response:
        try:
            args = await _arguments(endpoint, request)
            data = await _answer(endpoint, worker, args)
        except KbcError as error:
            return error_response(status_of(error), error.message, error.hint)
        except Exception as exc:
            import traceback

            traceback.print_exc(file=sys.stderr)
            return error_response(
                500,
                f"unexpected {type(exc).__name__} answering {endpoint.name}",
                "the server's standard error has the traceback; please report it",
            )
        return _json(data)

    return handle


def routes(worker: Worker) -> list[Route]:
    found = [
        Route(PREFIX + (e.route or e.path), _handler(e, worker), methods=[e.method], name=e.name)
        for e in ENDPOINTS
    ]

    async def openapi(request: Request) -> Response:
        return _json(openapi_document())

    found.append(Route(PREFIX + "/openapi.json", openapi, methods=["GET"], name="openapi"))
    found.append(Route(PREFIX + HOOK_PATH, push_hook(worker, read_body), methods=["POST"], name="push_hook"))
    return found


ERROR_REF = {"$ref": "#/components/schemas/Error"}
ERROR = {
    "type": "object",
    "required": ["error", "hint"],
    "properties": {"error": {"type": "string"}, "hint": {"type": "string"}},
}


def openapi_document() -> dict[str, Any]:
    """The OpenAPI 3.1 document of :data:`ENDPOINTS`."""
    paths: dict[str, dict[str, Any]] = {}
    schemas: dict[str, Any] = {"Error": ERROR}
    for e in ENDPOINTS:
        operation: dict[str, Any] = {
            "operationId": e.name,
            "summary": e.summary,
            "parameters": [
                {
                    "name": p.name,
                    "in": p.where,
                    "required": p.required or p.where == "path",
                    "description": p.description,
                    "schema": {"type": p.kind},
                }
                for p in (*e.params, *((REPOSITORY_PARAM,) if e.body is None and e.whole is None else ()))
            ],
            "responses": {
                "200": {"description": "The answer.", "content": {"application/json": {"schema": e.returns}}},
                "default": {
                    "description": "An error, with what to do about it.",
                    "content": {"application/json": {"schema": ERROR_REF}},
                },
            },
        }
        if e.body is not None:
            schemas[e.body.__name__] = e.body.model_json_schema(ref_template="#/components/schemas/{model}")
            operation["requestBody"] = {
                "required": True,
                "content": {
                    "application/json": {"schema": {"$ref": f"#/components/schemas/{e.body.__name__}"}}
                },
            }
        paths.setdefault(PREFIX + e.path, {})[e.method.lower()] = operation
    paths[PREFIX + HOOK_PATH] = {
        "post": {
            "operationId": "push_hook",
            "summary": "A GitHub or GitLab push event: queues a refresh of the served URL repository it "
            "names. Signed with serve.webhook_secret (X-Hub-Signature-256, or X-Gitlab-Token) "
            "instead of the bearer token.",
            "responses": {
                "202": {"description": "Refreshes queued: {queued: [names]}."},
                "200": {"description": "Nothing to refresh (a ping, another event, another repository)."},
                "default": {
                    "description": "An error.",
                    "content": {"application/json": {"schema": ERROR_REF}},
                },
            },
            "security": [{}],
        }
    }
    paths[PREFIX + "/openapi.json"] = {
        "get": {
            "operationId": "openapi",
            "summary": "This document.",
            "responses": {"200": {"description": "OpenAPI 3.1."}},
        }
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "kbc knowledge base",
            "version": __version__,
            "description": "The compiled knowledge bases of the repositories this server answers for "
            "(GET /api/v1/repositories). With a token configured, send "
            "'Authorization: Bearer <token>'.",
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{}, {"bearer": []}],
    }
