"""The REST API's table: every endpoint declared once (its method, path, operation, summary,
parameters or request body, what it returns, and the call it makes on a knowledge base or a
workspace), with the request models and the response schemas. :mod:`kbc.serve.api` makes the
routes and the OpenAPI document from it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kbc import __version__
from kbc.domain.codec import to_data
from kbc.domain.errors import KbcError, NotFound
from kbc.services.fused import retrieve_across, search_across, symbols_across
from kbc.services.knowledge import KnowledgeBase
from kbc.services.payloads import (
    answer_data,
    drift_data,
    file_data,
    fitted,
    gaps_data,
    hits_data,
    scopes_data,
    slice_data,
    status_data,
    symbols_data,
    use_cases_data,
    views_data,
)
from kbc.services.workspace import Workspace

PREFIX = "/api/v1"


REPOSITORY = (
    "The repository to read (GET /api/v1/repositories); default: the only one, or, for "
    "retrieve, search and symbols, every one (each result names its repository)."
)


class RetrieveRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    task: str = Field(min_length=1, description="What the agent is about to do, in plain words.")
    use_case: str = Field("implementation", description="Retrieval profile (GET /api/v1/use-cases).")
    budget: int | None = Field(None, gt=0, description="Token budget; default: the use case's.")
    scopes: list[str] | None = Field(
        None,
        description="Knowledge scopes the slice may hold (GET /api/v1/scopes); default: all but projects/...",
    )
    min_confidence: float | None = Field(
        None,
        ge=0,
        le=1,
        description="Pack nothing (but pointers to the nearest matches) when the slice's confidence "
        "is below this; default: the confidence floor; 0: always pack.",
    )
    repository: str | None = Field(None, description=REPOSITORY)


class AskRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, description="A question about the repository.")
    budget: int | None = Field(None, gt=0, description="Tokens of sources to answer from.")
    no_llm: bool = Field(False, description="Quote the best passages instead of asking the LLM.")
    scopes: list[str] | None = Field(None, description="Knowledge scopes to answer from.")
    repository: str | None = Field(None, description=REPOSITORY)


class ProposalRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(
        min_length=1,
        description="The knowledge document, relative to its root (prefixed by "
        "the root's name when several), or @knowledge/<root>/<path>.",
    )
    rationale: str = Field(min_length=1, description="Why it should change.")
    author: str = Field(min_length=1, description="Who proposes it.")
    content: str | None = Field(None, description="The whole new document.")
    diff: str | None = Field(None, description="Or a unified diff of it.")
    repository: str | None = Field(None, description=REPOSITORY)


class UsageRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query_id: str = Field(min_length=1, description="The query_id of a retrieve or ask.")
    helpful_ids: list[str] = Field(description="Ids of the items that helped; [] if none did.")
    repository: str | None = Field(None, description=REPOSITORY)


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    description: str
    kind: str = "string"  # "string" or "integer"
    required: bool = False
    where: str = "query"  # "query" or "path"


REPOSITORY_PARAM = Param("repository", REPOSITORY)


@dataclass(frozen=True, slots=True)
class Endpoint:
    method: str
    path: str  # OpenAPI form: /views/{view_id}
    name: str  # operationId, and the metrics' endpoint label
    summary: str
    answer: Callable[[KnowledgeBase, dict[str, Any]], Any]
    params: tuple[Param, ...] = ()
    body: type[BaseModel] | None = None
    returns: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    route: str = ""  # Starlette form, when it differs: /views/{view_id:path}
    # with several repositories served and none named: the answer across all of them
    across: Callable[[Workspace, dict[str, Any]], Any] | None = None
    whole: Callable[[Workspace, dict[str, Any]], Any] | None = None  # always about the whole workspace


def _int(value: str | None, name: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise KbcError(f"{name} must be an integer, not {value!r}") from None


def _symbols(kb: KnowledgeBase, args: dict[str, Any]) -> list[dict[str, Any]]:
    name = str(args.get("name") or "")
    if not name:
        raise KbcError("name is required", hint="give a qualified name or its tail: ?name=pkg.mod.func")
    found = symbols_data(kb.reads.symbol(name))
    if not found:
        raise NotFound(f"no symbol named {name!r}", hint="try a shorter or a qualified name")
    return found


def _search(kb: KnowledgeBase, args: dict[str, Any]) -> list[dict[str, Any]]:
    query = str(args.get("q") or "")
    if not query:
        raise KbcError("q is required", hint="give the words to look up: ?q=token budget")
    return hits_data(
        kb.search(
            query,
            _int(args.get("k"), "k") or 10,
            str(args.get("use_case") or "implementation"),
            budget=_int(args.get("budget"), "budget"),
        )
    )


def _view(kb: KnowledgeBase, args: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = to_data(kb.reads.view(args["view_id"]))
    budget = _int(args.get("budget"), "budget")
    return data if budget is None else fitted(data, budget, kb.components.token_counter().count)


def _health(workspace: Workspace, args: dict[str, Any]) -> dict[str, Any]:
    built = [m["status"] != "not built" for m in workspace.listing()]
    return {"ok": True, "version": __version__, "built": any(built), "repositories": len(built)}


def _unused(kb: KnowledgeBase, args: dict[str, Any]) -> Any:
    raise KbcError("this endpoint answers for the whole server")  # never called: whole answers


def _search_across(workspace: Workspace, args: dict[str, Any]) -> list[dict[str, Any]]:
    query = str(args.get("q") or "")
    if not query:
        raise KbcError("q is required", hint="give the words to look up: ?q=token budget")
    return hits_data(
        search_across(
            workspace,
            query,
            _int(args.get("k"), "k") or 10,
            str(args.get("use_case") or "implementation"),
            budget=_int(args.get("budget"), "budget"),
        )
    )


def _symbols_across(workspace: Workspace, args: dict[str, Any]) -> list[dict[str, Any]]:
    name = str(args.get("name") or "")
    if not name:
        raise KbcError("name is required", hint="give a qualified name or its tail: ?name=pkg.mod.func")
    found = symbols_across(workspace, name)
    if not found:
        raise NotFound(
            f"no symbol named {name!r} in any repository", hint="try a shorter or a qualified name"
        )
    return found


ITEM = {
    "type": "object",
    "required": ["id", "path", "start_line", "end_line", "kind", "score", "tokens"],
    "properties": {
        "id": {"type": "string"},
        "path": {"type": "string"},
        "start_line": {"type": "integer"},
        "end_line": {"type": "integer"},
        "kind": {"type": "string"},
        "score": {"type": "number"},
        "tokens": {"type": "integer"},
        "date": {"type": "string", "description": "A document's: last commit or modified, and the day"},
        "behind": {"type": "string", "description": "A document behind the code: why"},
        "repository": {"type": "string", "description": "A server of several: whose"},
    },
}
SLICE = {
    "type": "object",
    "required": [
        "use_case",
        "budget",
        "tokens",
        "fingerprint",
        "retrieval",
        "note",
        "confidence",
        "low_confidence",
        "matched",
        "items",
        "text",
        "query_id",
    ],
    "properties": {
        "use_case": {"type": "string"},
        "budget": {"type": "integer"},
        "tokens": {"type": "integer"},
        "fingerprint": {"type": "string"},
        "retrieval": {"type": "string", "enum": ["hybrid", "lexical"]},
        "note": {"type": "string"},
        "confidence": {
            "type": "number",
            "description": "0 to 1: that the slice's first document is what the task needs (calibrated)",
        },
        "low_confidence": {
            "type": "boolean",
            "description": "Nothing relevant: little in the repository matches the task (the slice "
            "packs nothing unless a minimum confidence is given)",
        },
        "relevance": {"type": "number", "description": "0 to 1: that the repository answers the task at all"},
        "matched": {"type": "array", "items": {"type": "object"}},
        "items": {"type": "array", "items": ITEM},
        "text": {"type": "string"},
        "query_id": {"type": "string"},
        "reranked": {
            "type": "boolean",
            "description": "With a reranker configured: whether the first candidates were re-ordered by it",
        },
        "rerank": {
            "type": "string",
            "description": "With a reranker configured: by which model, or why the fused order was kept",
        },
    },
}
LIST = {"type": "array", "items": {"type": "object"}}

ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint(
        "GET",
        "/health",
        "health",
        "Whether the server is up and a build is there.",
        _unused,
        whole=_health,
        returns={
            "type": "object",
            "required": ["ok", "version", "built", "repositories"],
            "properties": {
                "ok": {"type": "boolean"},
                "version": {"type": "string"},
                "built": {"type": "boolean"},
                "repositories": {"type": "integer"},
            },
        },
    ),
    Endpoint(
        "GET",
        "/repositories",
        "repositories",
        "The repositories this server answers for: name, path "
        "or url, branch, commit served, built_at, status, behind (MCP list_repositories).",
        _unused,
        whole=lambda workspace, _: workspace.listing(),
        returns=LIST,
    ),
    Endpoint(
        "GET",
        "/status",
        "status",
        "What the store holds and what retrieval uses (kbc status).",
        lambda kb, _: status_data(kb.status()),
    ),
    Endpoint(
        "POST",
        "/retrieve",
        "retrieve",
        "A precision slice under a token budget (MCP "
        "retrieve_slice; kbc retrieve --format json, with the query_id for /usage).",
        lambda kb, a: slice_data(
            *kb.retrieve_logged(
                a["task"], a["use_case"], a["budget"], scopes=a["scopes"], min_confidence=a["min_confidence"]
            )
        ),
        body=RetrieveRequest,
        returns=SLICE,
        across=lambda w, a: retrieve_across(
            w, a["task"], a["use_case"], a["budget"], scopes=a["scopes"], min_confidence=a["min_confidence"]
        ),
    ),
    Endpoint(
        "POST",
        "/ask",
        "ask",
        "An answer with validated citations (kbc ask --format json).",
        lambda kb, a: answer_data(
            *kb.ask(a["question"], no_llm=a["no_llm"], budget=a["budget"], scopes=a["scopes"])
        ),
        body=AskRequest,
    ),
    Endpoint(
        "POST",
        "/usage",
        "usage",
        "Report which items of a retrieve or ask helped (MCP report_usage); an empty list marks a gap.",
        _unused,
        body=UsageRequest,
        whole=lambda w, a: {"recorded": w.report_usage(a["query_id"], a["helpful_ids"], a["repository"])},
    ),
    Endpoint(
        "GET",
        "/search",
        "search",
        "Ranked lookup over the index, without a budget (MCP search).",
        _search,
        across=_search_across,
        params=(
            Param("q", "Words, identifiers or a phrase.", required=True),
            Param("k", "How many hits (default 10).", "integer"),
            Param("use_case", "Profile whose weights rank the hits."),
            Param("budget", "Tokens the hits' texts may take (default: no limit).", "integer"),
        ),
    ),
    Endpoint(
        "GET",
        "/views",
        "views",
        "The views, whole (kbc views --format json).",
        lambda kb, a: views_data(kb.reads.views(a.get("kind") or None)),
        params=(Param("kind", "Only views of this kind."),),
        returns=LIST,
    ),
    Endpoint(
        "GET",
        "/views/{view_id}",
        "view",
        "One view (MCP get_view).",
        _view,
        params=(
            Param("view_id", "e.g. architecture, module:pkg.sub", required=True, where="path"),
            Param(
                "budget", "Tokens the view may take (its longest parts cut; truncated names them).", "integer"
            ),
        ),
        route="/views/{view_id:path}",
    ),
    Endpoint(
        "GET",
        "/symbols",
        "symbols",
        "Where a name is defined, its callers and callees (kbc symbols --format json).",
        _symbols,
        across=_symbols_across,
        params=(Param("name", "A qualified name or its tail.", required=True),),
        returns=LIST,
    ),
    Endpoint(
        "GET",
        "/files/{path}",
        "files",
        "Lines of a tracked file, confined and redacted as MCP get_file.",
        lambda kb, a: file_data(
            kb.reads.file(
                a["path"],
                _int(a.get("start"), "start"),
                _int(a.get("end"), "end"),
                _int(a.get("budget"), "budget"),
            )
        ),
        params=(
            Param("path", "Relative to the repository root.", required=True, where="path"),
            Param("start", "First line, 1-based.", "integer"),
            Param("end", "Last line, inclusive.", "integer"),
            Param("budget", "Tokens the lines may take (truncated says if some were left out).", "integer"),
        ),
        route="/files/{path:path}",
    ),
    Endpoint(
        "GET",
        "/use-cases",
        "use_cases",
        "The retrieval profiles and their budgets.",
        lambda kb, _: use_cases_data(kb.use_cases.all().values()),
        returns=LIST,
    ),
    Endpoint(
        "GET",
        "/scopes",
        "scopes",
        "The knowledge scopes and their documents (kbc scopes --format json, MCP list_scopes).",
        lambda kb, _: scopes_data(kb.reads.scopes()),
        returns=LIST,
    ),
    Endpoint(
        "GET",
        "/proposals",
        "proposals",
        "Proposals to the knowledge roots (kbc proposals --format json, MCP list_proposals).",
        lambda kb, _: [asdict(p) for p in kb.proposals.all()],
        returns=LIST,
    ),
    Endpoint(
        "POST",
        "/proposals",
        "propose",
        "Propose a change to a knowledge document: one commit on a new "
        "branch for a person to merge (MCP propose_update).",
        lambda kb, a: asdict(
            kb.proposals.propose(
                a["path"], content=a["content"], diff=a["diff"], rationale=a["rationale"], author=a["author"]
            )
        ),
        body=ProposalRequest,
    ),
    Endpoint(
        "GET",
        "/gaps",
        "gaps",
        "What the knowledge base could not answer (kbc gaps --format json).",
        lambda kb, _: gaps_data(kb.queries.gaps()),
        returns=LIST,
    ),
    Endpoint(
        "GET",
        "/drift",
        "drift",
        "Documents behind the code (kbc drift --format json).",
        lambda kb, _: drift_data(kb.reads.drift()),
        returns=LIST,
    ),
)
