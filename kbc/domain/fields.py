"""Every setting declared once: its table and key in kbc.toml, its type, its environment
variable, its lower bound and its help, and whether a repository's own configuration may set
it (:mod:`kbc.domain.settings` reads them; the defaults are :class:`Settings`' own)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FieldSpec:
    name: str  # attribute of Settings
    section: str  # table in kbc.toml
    key: str  # key in that table
    kind: type  # int, float, bool, str or tuple (of strings)
    env: str
    minimum: int | None = None
    help: str = ""
    # decides where data, code or credentials go: never read from a repository's own files
    trusted_only: bool = False
    # what the machine spends (processes, sizes, connections, waits): the user's to set, not the repository's
    limit: bool = False

    @property
    def dotted(self) -> str:
        return f"{self.section}.{self.key}"


FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec(
        "max_file_bytes",
        "discover",
        "max_file_bytes",
        int,
        "KBC_MAX_FILE_BYTES",
        1,
        "files larger than this many bytes are skipped as oversized",
        limit=True,
    ),
    FieldSpec(
        "exclude",
        "discover",
        "exclude",
        tuple,
        "KBC_EXCLUDE",
        None,
        "glob patterns of tracked paths to leave out (comma-separated in the environment)",
    ),
    FieldSpec(
        "git_timeout",
        "discover",
        "git_timeout",
        int,
        "KBC_GIT_TIMEOUT",
        1,
        "a clone or fetch of a URL (a repository or a knowledge root) not finished after this "
        "many seconds is stopped, and fails",
        limit=True,
    ),
    FieldSpec(
        "git_stall_timeout",
        "discover",
        "git_stall_timeout",
        int,
        "KBC_GIT_STALL_TIMEOUT",
        1,
        "an HTTP(S) clone or fetch receiving nothing for this many seconds is stopped (git's "
        "http.lowSpeedTime, at a byte a second)",
        limit=True,
    ),
    FieldSpec(
        "workers",
        "analyze",
        "workers",
        int,
        "KBC_WORKERS",
        0,
        "analysis processes; 0 means one per CPU",
        limit=True,
    ),
    FieldSpec(
        "source_roots",
        "analyze",
        "source_roots",
        tuple,
        "KBC_SOURCE_ROOTS",
        None,
        "directories that hold top-level packages; empty means detect (., src/, projects)",
    ),
    FieldSpec(
        "module_split_files",
        "graph",
        "module_split_files",
        int,
        "KB_MODULE_SPLIT_FILES",
        1,
        "a module group with more Python files than this is split per subdirectory",
    ),
    FieldSpec(
        "max_modules",
        "graph",
        "max_modules",
        int,
        "KNOWLEDGE_MAX_MODULES",
        1,
        "the most module groups the split may produce",
    ),
    FieldSpec(
        "store",
        "store",
        "path",
        str,
        "KBC_STORE",
        None,
        "where the store lives; empty means <repository>/.kbc (a repository's own "
        "configuration may only name a folder inside the repository)",
        trusted_only=True,
    ),
    FieldSpec(
        "chunk_lines",
        "index",
        "chunk_lines",
        int,
        "KBC_CHUNK_LINES",
        2,
        "lines in a chunk (the unit retrieval ranks and packs)",
    ),
    FieldSpec(
        "chunk_overlap",
        "index",
        "chunk_overlap",
        int,
        "KBC_CHUNK_OVERLAP",
        0,
        "lines neighbouring chunks share; less than chunk_lines",
    ),
    FieldSpec(
        "embed_tests",
        "index",
        "embed_tests",
        bool,
        "KBC_EMBED_TESTS",
        None,
        "embed test code too; off, tests are found by lexical search, by what the task "
        "names and through the call graph, and the build embeds about a third less",
    ),
    FieldSpec(
        "embed_tokens",
        "index",
        "embed_tokens",
        int,
        "KBC_EMBED_TOKENS",
        16,
        "tokens of a unit the embedding model reads (at most what the model reads; queries "
        "are read whole): fewer embed faster; see docs/index.md for what each costs",
    ),
    FieldSpec(
        "wait_units",
        "index",
        "wait_units",
        int,
        "KBC_WAIT_UNITS",
        0,
        "units `kbc build` embeds before it returns; with more to embed it publishes the "
        "index lexical and embeds them in a background process (`kbc build --wait`: "
        "always before it returns)",
        limit=True,
    ),
    FieldSpec(
        "first_files",
        "index",
        "first_files",
        int,
        "KBC_FIRST_FILES",
        1,
        "Python files a first `kbc build` reads with libcst before it returns; with more, it "
        "publishes an index cut at the definitions CPython's parser reads and reads the facts, "
        "the views and the vectors in a background process (`kbc build --wait`: always before "
        "it returns)",
        limit=True,
    ),
    FieldSpec(
        "llm_model",
        "llm",
        "model",
        str,
        "KBC_LLM_MODEL",
        None,
        "litellm model that writes the views' prose, e.g. openai/gpt-4o-mini or "
        "ollama/llama3; empty means no LLM (prose from docstrings)",
        trusted_only=True,
    ),
    FieldSpec(
        "llm_api_base",
        "llm",
        "api_base",
        str,
        "KBC_LLM_API_BASE",
        None,
        "base URL of an OpenAI-compatible server; empty means the provider's default "
        "(the key comes from the provider's variable or KBC_LLM_API_KEY)",
        trusted_only=True,
    ),
    FieldSpec(
        "llm_timeout",
        "llm",
        "timeout",
        int,
        "KBC_LLM_TIMEOUT",
        1,
        "seconds one LLM call may take",
        limit=True,
    ),
    FieldSpec(
        "llm_retries",
        "llm",
        "retries",
        int,
        "KBC_LLM_RETRIES",
        0,
        "retries of a failed LLM call, with exponential backoff",
        limit=True,
    ),
    FieldSpec(
        "llm_concurrency",
        "llm",
        "concurrency",
        int,
        "KBC_LLM_CONCURRENCY",
        1,
        "LLM calls in flight at once",
        limit=True,
    ),
    FieldSpec(
        "full_rebuild_fraction",
        "refresh",
        "full_rebuild_fraction",
        float,
        "KB_FULL_REBUILD_FRACTION",
        0,
        "a refresh rebuilds from scratch when this fraction of tracked files changed",
    ),
    FieldSpec(
        "full_rebuild_files",
        "refresh",
        "full_rebuild_files",
        int,
        "KB_FULL_REBUILD_FILES",
        1,
        "a refresh rebuilds from scratch when this many files changed (or the fraction "
        "above did, whichever comes first)",
    ),
    FieldSpec(
        "auto_refresh",
        "refresh",
        "auto",
        bool,
        "KB_AUTO_REFRESH",
        None,
        "retrieve and ask refresh the store first when the repository moved",
    ),
    FieldSpec(
        "lock_timeout",
        "refresh",
        "lock_timeout",
        int,
        "KBC_LOCK_TIMEOUT",
        0,
        "seconds a build or refresh waits for another writer of the same store",
        limit=True,
    ),
    FieldSpec(
        "gap_retention_days",
        "gaps",
        "retention_days",
        int,
        "KBC_GAP_RETENTION_DAYS",
        1,
        "days the knowledge-gap log keeps a query",
        limit=True,
    ),
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
        "embed_model",
        "index",
        "embed_model",
        str,
        "KBC_EMBED_MODEL",
        None,
        "the embedding model; empty means the packaged all-MiniLM-L6-v2 (int8), none "
        "switches vectors off (retrieval is then lexical)",
        trusted_only=True,
    ),
    FieldSpec(
        "embed_api_base",
        "index",
        "embed_api_base",
        str,
        "KBC_EMBED_API_BASE",
        None,
        "where an embedding model behind an API answers (index.embed_model = openai/..., "
        "ollama/..., a gateway's model; the key is KBC_LLM_API_KEY or the provider's own)",
        trusted_only=True,
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
        "chroma_url",
        "index",
        "chroma_url",
        str,
        "KBC_CHROMA_URL",
        None,
        "a Chroma server to keep the vectors on (http://host:port); empty means a local "
        "store under the store folder",
        trusted_only=True,
    ),
    FieldSpec(
        "llm_api_key",
        "llm",
        "api_key",
        str,
        "KBC_LLM_API_KEY",
        None,
        "the key sent to the LLM server; empty means the provider's own variable (OPENAI_API_KEY, ...)",
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
    FieldSpec(
        "data_dir",
        "store",
        "data_dir",
        str,
        "KBC_DATA_DIR",
        None,
        "where `kbc refresh URL` keeps its clones; empty means $XDG_DATA_HOME/kbc (~/.local/share/kbc)",
        trusted_only=True,
    ),
    FieldSpec(
        "cache_dir",
        "store",
        "cache_dir",
        str,
        "KBC_CACHE_DIR",
        None,
        "kbc's cache (the unpacked embedding model); empty means $XDG_CACHE_HOME/kbc (~/.cache/kbc)",
        trusted_only=True,
    ),
    FieldSpec(
        "default_scopes",
        "scopes",
        "default",
        tuple,
        "KBC_SCOPES",
        None,
        "the knowledge scopes a retrieve or ask reads when it names none; empty means "
        "every scope but the projects/<name> ones",
    ),
    FieldSpec(
        "workflow_depth",
        "views",
        "workflow_depth",
        int,
        "KBC_WORKFLOW_DEPTH",
        1,
        "how deep a workflow view follows calls from its entry point",
    ),
    FieldSpec(
        "max_workflows",
        "views",
        "max_workflows",
        int,
        "KBC_MAX_WORKFLOWS",
        0,
        "the most workflow views (one per entry point, most central first)",
    ),
    FieldSpec(
        "max_api_workflows",
        "views",
        "max_api_workflows",
        int,
        "KBC_MAX_API_WORKFLOWS",
        0,
        "the most workflow views followed from the public API (what the top-level package "
        "exports, the flows that reach most of the call graph first)",
    ),
)
