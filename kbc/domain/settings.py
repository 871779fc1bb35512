"""Settings: shipped defaults < user config < kbc.toml / [tool.kbc] < environment < flags.

Every field is declared once in ``FIELDS`` (:mod:`kbc.domain.fields`) with its type, default, section in
the TOML file and environment variable. ``load_settings`` collects every bad
value from every source and raises one :class:`ConfigError` listing them all.

A repository's own configuration is untrusted: a field marked ``trusted_only``
(it decides where data, code or credentials go) is honoured only from the
user's configuration file, the environment or a flag, unless the user's
configuration lists the repository under ``[trust] repositories``. A repository
that sets one gets a notice naming the field and the way to allow it.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kbc.domain.errors import ConfigError, FieldError
from kbc.domain.fields import FIELDS, FieldSpec
from kbc.domain.knowledge_roots import KnowledgeRoot, knowledge_root, knowledge_tables
from kbc.domain.trust import inside, own_folder, trusted_repositories
from kbc.domain.workspace import RepositoryEntry, repository_tables


@dataclass(frozen=True, slots=True)
class Settings:
    max_file_bytes: int = 1_000_000
    git_timeout: int = 300
    git_stall_timeout: int = 30
    exclude: tuple[str, ...] = ()
    workers: int = 0
    source_roots: tuple[str, ...] = ()
    module_split_files: int = 25
    max_modules: int = 50
    store: str = ""
    chunk_lines: int = 60
    chunk_overlap: int = 12
    embed_tests: bool = False
    embed_tokens: int = 64
    wait_units: int = 500
    first_files: int = 200
    llm_model: str = ""
    llm_api_base: str = ""
    llm_timeout: int = 60
    llm_retries: int = 2
    llm_concurrency: int = 4
    workflow_depth: int = 4
    max_workflows: int = 50
    max_api_workflows: int = 10
    full_rebuild_fraction: float = 0.3
    full_rebuild_files: int = 2000
    auto_refresh: bool = False
    lock_timeout: int = 600
    gap_retention_days: int = 90
    confidence_floor: float = -1.0  # below 0: the floor measured for the shipped ranking model
    session_idle_seconds: int = 300
    max_sessions: int = 1000
    fetch_seconds: int = 60
    publication_poll: int = 30
    refresh_wait: int = 60
    max_open: int = 24
    idle_seconds: int = 600
    cache_mb: int = 8
    webhook_secret: str = field(default="", repr=False)
    hook_budget: int = 2000
    hook_min_confidence: float = -1.0  # below 0: silent when the slice is marked low_confidence
    embed_model: str = ""
    embed_api_base: str = ""
    rerank_model: str = ""
    rerank_api_base: str = ""
    rerank_candidates: int = 20
    rerank_timeout: int = 10
    forge_kind: str = ""
    forge_api_base: str = ""
    forge_repository: str = ""
    forge_token: str = field(default="", repr=False)
    chroma_url: str = ""
    llm_api_key: str = field(default="", repr=False)
    token: str = field(default="", repr=False)
    data_dir: str = ""
    cache_dir: str = ""
    knowledge: tuple[KnowledgeRoot, ...] = ()  # [[knowledge]] tables, KBC_KNOWLEDGE, --knowledge
    forget_knowledge: bool = False  # `--knowledge none`: drop the roots the store remembers
    default_scopes: tuple[str, ...] = ()  # empty: every scope but projects/...
    repositories: tuple[RepositoryEntry, ...] = ()  # the user's [[repositories]] tables (a workspace)
    # what loading ignored and why (a repository's configuration setting a trusted-only field)
    notices: tuple[str, ...] = field(default=(), compare=False)

    def worker_count(self) -> int:
        return self.workers if self.workers > 0 else (os.cpu_count() or 1)

    def shape(self) -> str:
        """A hash of the settings that decide the store's content (not how fast it is built)."""
        import hashlib

        shaping = (
            self.max_file_bytes,
            self.exclude,
            self.source_roots,
            self.module_split_files,
            self.max_modules,
            self.chunk_lines,
            self.chunk_overlap,
            self.workflow_depth,
            self.max_workflows,
            self.max_api_workflows,
        )
        return hashlib.sha256(repr(shaping).encode()).hexdigest()[:16]


_BY_NAME = {f.name: f for f in FIELDS}
# never printed, never in a repr
SECRET_FIELDS = frozenset({"llm_api_key", "token", "webhook_secret", "forge_token"})
SECTIONS = sorted({f.section for f in FIELDS})


def _coerce(spec: FieldSpec, value: Any, source: str, errors: list[FieldError]) -> Any:
    """Check ``value`` against ``spec``; on failure record an error and return None."""

    def bad(problem: str, fix: str) -> None:
        errors.append(FieldError(source, spec.dotted, problem, fix))

    if spec.kind is bool:
        if isinstance(value, str) and value.strip().lower() in (
            "1",
            "true",
            "yes",
            "on",
            "0",
            "false",
            "no",
            "off",
            "",
        ):
            return value.strip().lower() in ("1", "true", "yes", "on")
        if isinstance(value, bool):
            return value
        bad(f"{value!r} is not true or false", f"write true or false ({spec.help})")
        return None
    if spec.kind in (int, float):
        whole = spec.kind is int
        noun, convert = ("a whole number", int) if whole else ("a number", float)
        if isinstance(value, str):
            try:
                value = convert(value.strip().replace("_", "") if whole else value.strip())
            except ValueError:
                bad(f"{value!r} is not {noun}", f"set it to {noun} ({spec.help})")
                return None
        allowed = (int,) if whole else (int, float)
        if isinstance(value, bool) or not isinstance(value, allowed):
            bad(f"{value!r} is not {noun}", f"set it to {noun} ({spec.help})")
            return None
        if spec.minimum is not None and value < spec.minimum:
            bad(f"{value} is below the minimum {spec.minimum}", f"use {spec.minimum} or more")
            return None
        return convert(value)
    if spec.kind is tuple:
        if isinstance(value, str):
            return tuple(p.strip() for p in value.split(",") if p.strip())
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(value)
        bad(f"{value!r} is not a list of strings", 'write a list such as ["a", "b"]')
        return None
    if not isinstance(value, str):
        bad(f"{value!r} is not a string", "quote the value")
        return None
    return value


def _read_toml(path: Path, errors: list[FieldError]) -> dict[str, Any] | None:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        errors.append(FieldError(str(path), "-", f"not valid TOML ({exc})", "fix the syntax"))
    except OSError as exc:
        errors.append(FieldError(str(path), "-", f"cannot be read ({exc.strerror})", "check its permissions"))
    return None


def _from_table(
    table: Mapping[str, Any],
    source: str,
    values: dict[str, Any],
    errors: list[FieldError],
    *,
    refuse: Callable[[FieldSpec, Any], str | None] | None = None,
    extra_sections: tuple[str, ...] = (),
) -> None:
    """Read one configuration table into ``values``.

    ``refuse(spec, value)`` returns why a value may not be taken from this source
    (None: take it); a refused value is left out and never checked further.
    """
    by_location = {(f.section, f.key): f for f in FIELDS}
    for section, body in table.items():
        if section in ("profiles", "knowledge") or section in extra_sections:
            continue  # use-case profiles (kbc.retrieval.profiles), knowledge roots and repositories (below)
        if section not in SECTIONS or not isinstance(body, dict):
            errors.append(
                FieldError(source, section, "unknown section", f"use one of: {', '.join(SECTIONS)}")
            )
            continue
        for key, raw in body.items():
            spec = by_location.get((section, key))
            if spec is None:
                known = sorted(f.key for f in FIELDS if f.section == section)
                errors.append(
                    FieldError(
                        source, f"{section}.{key}", "unknown setting", f"use one of: {', '.join(known)}"
                    )
                )
                continue
            if refuse is not None and refuse(spec, raw) is not None:
                continue
            value = _coerce(spec, raw, source, errors)
            if value is not None:
                values[spec.name] = value


def user_config_file(env: Mapping[str, str]) -> Path | None:
    """The user's own configuration file: ``KBC_CONFIG`` (empty: none), else
    ``$XDG_CONFIG_HOME/kbc/config.toml``, else ``~/.config/kbc/config.toml``."""
    if "KBC_CONFIG" in env:
        named = env["KBC_CONFIG"].strip()
        return Path(named).expanduser() if named else None
    base = env.get("XDG_CONFIG_HOME") or (str(Path(env["HOME"]) / ".config") if env.get("HOME") else "")
    return Path(base) / "kbc" / "config.toml" if base else None


def config_files(root: Path) -> list[Path]:
    """The configuration files of a repository, lowest precedence first."""
    return [p for p in (root / "pyproject.toml", root / "kbc.toml") if p.is_file()]


def _assign(assignments: Sequence[str], values: dict[str, Any], errors: list[FieldError]) -> None:
    """``kbc -c section.key=value``: the user's own, so trusted like the environment."""
    by_dotted = {f.dotted: f for f in FIELDS}
    for assignment in assignments:
        dotted, equals, raw = assignment.partition("=")
        spec = by_dotted.get(dotted.strip())
        if not equals or spec is None:
            problem = "is not a known setting" if equals else "is not section.key=value"
            errors.append(
                FieldError(
                    "-c",
                    dotted.strip() or assignment,
                    problem,
                    f"write section.key=value with one of: {', '.join(sorted(by_dotted))}",
                )
            )
            continue
        value = _coerce(spec, raw.strip(), f"-c {spec.dotted}", errors)
        if value is not None:
            values[spec.name] = value


def load_settings(  # noqa: C901 - every source in its precedence, read in one place
    root: Path,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    assignments: Sequence[str] = (),
) -> Settings:
    """Resolve settings for the repository at ``root``.

    ``assignments`` are ``section.key=value`` strings (``kbc -c``), above the
    environment; ``overrides`` maps Settings attribute names to flag values (None =
    not given), above everything.
    """
    env = os.environ if env is None else env
    errors: list[FieldError] = []
    values: dict[str, Any] = {}
    notices: list[str] = []
    user_file = user_config_file(env)
    user_data: dict[str, Any] = {}
    if user_file is not None and user_file.is_file():
        user_data = _read_toml(user_file, errors) or {}
        _from_table(user_data, str(user_file), values, errors, extra_sections=("trust", "repositories"))
    trusted = trusted_repositories(user_data, str(user_file), env, errors)
    repo_trusted = root.resolve() in trusted
    where = str(user_file) if user_file is not None else "the file named by KBC_CONFIG"

    knowledge: list[KnowledgeRoot] = knowledge_tables(user_data, str(user_file), errors) if user_data else []
    repositories = repository_tables(user_data, str(user_file), errors) if user_data else []

    def own_knowledge(data: Mapping[str, Any], source: str) -> None:
        """A repository's own roots: folders inside it (others only when it is trusted)."""
        for found in knowledge_tables(data, source, errors):
            if repo_trusted or (found.path and inside(root, found.path)):
                knowledge.append(found)
                continue
            notices.append(
                f"{source}: knowledge root {found.name!r} ({found.where}) ignored: a repository's own "
                f"configuration may only name a folder inside the repository → configure it in {where} "
                f"or KBC_KNOWLEDGE, or trust this repository's configuration with "
                f'[trust] repositories = ["{root.resolve()}"] in {where}'
            )

    def refuse_from(source: str) -> Callable[[FieldSpec, Any], str | None]:
        def refuse(spec: FieldSpec, value: Any) -> str | None:
            if repo_trusted or not (spec.trusted_only or spec.limit):
                return None
            if (
                spec.name == "store"
                and isinstance(value, str)
                and inside(root, value)
                and own_folder(root, value)
            ):
                return None
            shown = "'…'" if spec.name in SECRET_FIELDS else repr(value)  # a key is never printed
            why = "cannot decide where data, code or credentials go"
            if spec.limit:
                why = "cannot decide what this machine spends"
            elif spec.name == "store" and inside(root, str(value)):
                why = (
                    "may only keep its store in a new folder inside it (not the repository itself, "
                    "not .git, not a folder holding other files)"
                )
            notices.append(
                f"{source}: {spec.dotted} = {shown} ignored: a repository's own configuration "
                f"{why} → set it in {where} or "
                f"{spec.env}, or trust this repository's configuration with "
                f'[trust] repositories = ["{root.resolve()}"] in {where}'
            )
            return "trusted only"

        return refuse

    for path in config_files(root):
        data = _read_toml(path, errors)
        if data is None:
            continue
        if path.name == "pyproject.toml":
            tool = data.get("tool", {})
            table = tool.get("kbc", {}) if isinstance(tool, dict) else {}
            source = f"{path.name} [tool.kbc]"
            _from_table(table, source, values, errors, refuse=refuse_from(source))
            if isinstance(table, dict):
                own_knowledge(table, source)
        else:
            _from_table(data, path.name, values, errors, refuse=refuse_from(path.name))
            own_knowledge(data, path.name)
    forget = False
    for entry in (e for e in env.get("KBC_KNOWLEDGE", "").split(",") if e.strip()):
        if entry.strip().lower() == "none":
            forget = True
        elif (from_env := knowledge_root(entry, "KBC_KNOWLEDGE", errors)) is not None:
            knowledge.append(from_env)
    for spec in FIELDS:
        if spec.env in env:
            value = _coerce(spec, env[spec.env], spec.env, errors)
            if value is not None:
                values[spec.name] = value
    _assign(assignments, values, errors)
    for name, raw in (overrides or {}).items():
        if raw is None:
            continue
        if name == "knowledge":  # --knowledge [name=]path-or-url, repeated
            for entry in raw:
                if entry.strip().lower() == "none":
                    forget = True
                elif (flagged := knowledge_root(entry, "--knowledge", errors)) is not None:
                    knowledge.append(flagged)
            continue
        spec = _BY_NAME[name]
        value = _coerce(spec, raw, "--" + name.replace("_", "-"), errors)
        if value is not None:
            values[name] = value
    defaults = Settings()
    chunk_lines = values.get("chunk_lines", defaults.chunk_lines)
    if values.get("chunk_overlap", defaults.chunk_overlap) >= chunk_lines:
        errors.append(
            FieldError(
                "settings",
                "index.chunk_overlap",
                f"must be less than index.chunk_lines ({chunk_lines})",
                "lower chunk_overlap or raise chunk_lines",
            )
        )
    names = [k.name for k in knowledge]
    for twice in sorted({n for n in names if names.count(n) > 1}):
        errors.append(
            FieldError(
                "knowledge",
                twice,
                "two knowledge roots have this name",
                "give each root its own name (name = ... or name=path)",
            )
        )
    if errors:
        raise ConfigError(errors)
    return Settings(
        **values,
        knowledge=tuple(knowledge),
        forget_knowledge=forget and not knowledge,
        repositories=tuple(repositories),
        notices=tuple(notices),
    )


def default_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """kbc's cache folder when ``store.cache_dir`` is empty: $XDG_CACHE_HOME/kbc, ~/.cache/kbc."""
    env = os.environ if env is None else env
    return Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kbc"


def default_data_dir(env: Mapping[str, str] | None = None) -> Path:
    """kbc's data folder when ``store.data_dir`` is empty: $XDG_DATA_HOME/kbc, ~/.local/share/kbc."""
    env = os.environ if env is None else env
    return Path(env.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "kbc"


# What the libraries kbc uses read to stay quiet: no telemetry, no model-cost download.
QUIET = {
    "ORT_DISABLE_TELEMETRY": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "DO_NOT_TRACK": "1",
    "ANONYMIZED_TELEMETRY": "False",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_TELEMETRY": "False",
}


def environment_with(extra: Mapping[str, str]) -> dict[str, str]:
    """This process's environment with ``extra`` on top: what a child process (git) is given."""
    return {**os.environ, **extra}


def quiet_dependencies() -> None:
    """Tell the libraries kbc uses (onnxruntime, Hugging Face, Chroma, litellm) to phone no one.
    They read only their environment, so these are set for the process, unless already set:
    the one place kbc writes to the environment."""
    for key, value in QUIET.items():
        os.environ.setdefault(key, value)
