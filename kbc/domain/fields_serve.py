"""The settings of what answers requests: retrieval, the server, the agent hooks and the forge."""

from __future__ import annotations

from kbc.domain.fieldspec import FieldSpec

SERVE_FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec(
        "confidence_floor",
        "retrieval",
        "confidence_floor",
        float,
        "KBC_CONFIDENCE_FLOOR",
        None,
        "a slice whose relevance (that the repository answers the task at all) is below this "
        "is marked low_confidence, packs nothing but pointers unless a minimum confidence is "
        "asked, and is logged as a knowledge gap; below 0 means the floor measured for the "
        "shipped model and the retrieval mode (see docs/index.md)",
    ),
    FieldSpec(
        "session_idle_seconds",
        "serve",
        "session_idle_seconds",
        int,
        "KBC_SESSION_IDLE_SECONDS",
        1,
        "an HTTP session of `kbc serve` idle this many seconds is closed (a client that "
        "never ends its session frees it then)",
        limit=True,
    ),
    FieldSpec(
        "max_sessions",
        "serve",
        "max_sessions",
        int,
        "KBC_MAX_SESSIONS",
        1,
        "HTTP sessions `kbc serve` keeps open at once; beyond, a new one is refused (503) "
        "until one ends or idles out",
        limit=True,
    ),
    FieldSpec(
        "fetch_seconds",
        "serve",
        "fetch_seconds",
        int,
        "KBC_FETCH_SECONDS",
        0,
        "a workspace fetches its URL repositories and knowledge roots, and refreshes what moved, "
        "this often; 0 means only on a push webhook",
        limit=True,
    ),
    FieldSpec(
        "publication_poll",
        "serve",
        "publication_poll",
        int,
        "KBC_PUBLICATION_POLL",
        1,
        "a server of a published store (s3://...) reads its manifest this often, in seconds, and "
        "switches to a newer publication once it is pulled and checked",
        limit=True,
    ),
    FieldSpec(
        "refresh_wait",
        "serve",
        "refresh_wait",
        int,
        "KBC_REFRESH_WAIT",
        0,
        "seconds the MCP refresh tool waits, when asked to, before answering that the refresh "
        "goes on in the background",
        limit=True,
    ),
    FieldSpec(
        "max_open",
        "serve",
        "max_open",
        int,
        "KBC_MAX_OPEN",
        1,
        "repositories whose stores a workspace keeps open at once; beyond, the one used least "
        "recently is closed (a retrieval across more repositories than this reopens stores)",
        limit=True,
    ),
    FieldSpec(
        "idle_seconds",
        "serve",
        "idle_seconds",
        int,
        "KBC_IDLE_SECONDS",
        0,
        "a repository's store not used this many seconds is closed (opened again on its next "
        "request); 0 keeps it open",
        limit=True,
    ),
    FieldSpec(
        "cache_mb",
        "serve",
        "cache_mb",
        int,
        "KBC_SERVE_CACHE_MB",
        0,
        "MiB of answered slices and rankings each open store keeps to answer a repeated request "
        "without ranking it again (half each, least recently used dropped first); 0 keeps none",
        limit=True,
    ),
    FieldSpec(
        "webhook_secret",
        "serve",
        "webhook_secret",
        str,
        "KBC_WEBHOOK_SECRET",
        None,
        "the shared secret of push webhooks (GitHub's signature, GitLab's token); empty "
        "refuses every webhook",
        trusted_only=True,
    ),
    FieldSpec(
        "hook_budget",
        "hooks",
        "budget",
        int,
        "KBC_HOOK_BUDGET",
        100,
        "tokens of the slice `kbc hook user-prompt-submit` puts in front of an agent's turn "
        "(Claude Code shows about 10,000 characters of a hook's context whole)",
    ),
    FieldSpec(
        "hook_min_confidence",
        "hooks",
        "min_confidence",
        float,
        "KBC_HOOK_MIN_CONFIDENCE",
        None,
        "below this confidence `kbc hook user-prompt-submit` adds nothing; below 0 means "
        "whenever the slice is marked low_confidence (the measured floor)",
    ),
    FieldSpec(
        "rerank_model",
        "retrieval",
        "rerank_model",
        str,
        "KBC_RERANK_MODEL",
        None,
        "re-order a slice's first candidates with this model before packing: a litellm chat "
        "model (openai/..., ollama/...; it reads the task and the candidates' code), or "
        "plugin:NAME for an installed reranker (the kbc.rerankers entry point, e.g. a local "
        "cross-encoder); empty means the fused order",
        trusted_only=True,
    ),
    FieldSpec(
        "rerank_api_base",
        "retrieval",
        "rerank_api_base",
        str,
        "KBC_RERANK_API_BASE",
        None,
        "where the rerank model answers; empty means llm.api_base (the key is KBC_LLM_API_KEY "
        "or the provider's own)",
        trusted_only=True,
    ),
    FieldSpec(
        "rerank_candidates",
        "retrieval",
        "rerank_candidates",
        int,
        "KBC_RERANK_CANDIDATES",
        2,
        "the first candidates the rerank model re-orders (each shown in at most 150 tokens); "
        "the rest keep the fused order after them",
        limit=True,
    ),
    FieldSpec(
        "rerank_timeout",
        "retrieval",
        "rerank_timeout",
        int,
        "KBC_RERANK_TIMEOUT",
        1,
        "seconds the rerank model may take; past it, or on any failure, the slice keeps the "
        "fused order and says so",
        limit=True,
    ),
    FieldSpec(
        "forge_kind",
        "forge",
        "kind",
        str,
        "KBC_FORGE_KIND",
        None,
        "github or gitlab: a proposal pushed to the knowledge root's remote also opens a pull "
        "(merge) request there; empty opens none",
        trusted_only=True,
    ),
    FieldSpec(
        "forge_api_base",
        "forge",
        "api_base",
        str,
        "KBC_FORGE_API_BASE",
        None,
        "the forge's REST API; empty means https://api.github.com or https://gitlab.com/api/v4",
        trusted_only=True,
    ),
    FieldSpec(
        "forge_repository",
        "forge",
        "repository",
        str,
        "KBC_FORGE_REPOSITORY",
        None,
        "the repository (owner/name, a GitLab project's path) that holds the knowledge root's "
        "remote, where the requests are opened",
        trusted_only=True,
    ),
    FieldSpec(
        "forge_token",
        "forge",
        "token",
        str,
        "KBC_FORGE_TOKEN",
        None,
        "the token kbc opens and reads requests with (a GitHub token with pull-request write, "
        "a GitLab token with api scope)",
        trusted_only=True,
    ),
    FieldSpec(
        "token",
        "serve",
        "token",
        str,
        "KBC_TOKEN",
        None,
        "the bearer token `kbc serve` requires over HTTP (16 characters or more; required "
        "to bind beyond loopback)",
        trusted_only=True,
    ),
)
