"""Settings: defaults < user config < pyproject [tool.kbc] < kbc.toml < environment < kbc -c < flags."""

from dataclasses import fields
from pathlib import Path

import pytest

from kbc.domain.errors import ConfigError
from kbc.domain.example_config import defaults_as_toml
from kbc.domain.fields import FIELDS
from kbc.domain.settings import Settings, load_settings
from kbc.domain.trust import STORE_MARK

ROOT = Path(__file__).resolve().parents[3]


def test_defaults_apply_without_any_source(tmp_path: Path) -> None:
    assert load_settings(tmp_path, env={}) == Settings()


def test_each_source_overrides_the_one_below(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.kbc.analyze]\nworkers = 3\nsource_roots = ['lib']\n[tool.kbc.graph]\nmax_modules = 7\n"
    )
    (tmp_path / "kbc.toml").write_text("[analyze]\nworkers = 4\n[graph]\nmodule_split_files = 9\n")
    env = {"KB_MODULE_SPLIT_FILES": "11", "KNOWLEDGE_MAX_MODULES": "12", "KBC_WORKERS": "5"}
    settings = load_settings(tmp_path, env=env, overrides={"workers": 6, "max_file_bytes": None})
    assert (settings.source_roots, settings.max_modules, settings.module_split_files, settings.workers) == (
        ("lib",),
        12,
        11,
        6,
    )


def test_dash_c_assignments_sit_above_the_environment_and_below_flags(tmp_path: Path) -> None:
    (tmp_path / "kbc.toml").write_text('[analyze]\nworkers = 4\n[llm]\nmodel = "from/repo"\n')
    settings = load_settings(
        tmp_path,
        env={"KBC_WORKERS": "5", "KBC_EMBED_MODEL": "some/model"},
        assignments=[
            "analyze.workers=6",
            "index.embed_model = none",
            "llm.model=openai/mine",
            "discover.exclude=a/*, b/*",
        ],
        overrides={"workers": 7},
    )
    assert (settings.workers, settings.embed_model, settings.llm_model, settings.exclude) == (
        7,
        "none",
        "openai/mine",
        ("a/*", "b/*"),
    )
    assert [n for n in settings.notices if "llm.model" in n]  # the repository's value was refused


def test_a_bad_dash_c_assignment_names_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(
            tmp_path, env={}, assignments=["index.embed_modle=none", "workers", "analyze.workers=x"]
        )
    message = str(caught.value)
    assert "-c: index.embed_modle: is not a known setting" in message and "index.embed_model" in message
    assert "-c: workers: is not section.key=value" in message
    assert "-c analyze.workers: analyze.workers: 'x' is not a whole number" in message


def test_every_bad_field_is_reported_at_once(tmp_path: Path) -> None:
    (tmp_path / "kbc.toml").write_text(
        "[analyze]\nthreads = 2\n[index]\nchunk_lines = 'many'\n[graph]\nmax_modules = 0\n[colour]\nx = 1\n"
    )
    env = {"KBC_MAX_FILE_BYTES": "ten", "KB_MODULE_SPLIT_FILES": "-1"}
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path, env=env, overrides={"workers": -3})
    problems = {(e.source, e.field) for e in caught.value.errors}
    assert problems == {
        ("kbc.toml", "index.chunk_lines"),
        ("kbc.toml", "analyze.threads"),
        ("kbc.toml", "graph.max_modules"),
        ("kbc.toml", "colour"),
        ("KBC_MAX_FILE_BYTES", "discover.max_file_bytes"),
        ("KB_MODULE_SPLIT_FILES", "graph.module_split_files"),
        ("--workers", "analyze.workers"),
    }
    message = str(caught.value)
    assert message.startswith("7 configuration errors:")
    assert "analyze.threads: unknown setting → use one of: source_roots, workers" in message
    assert "'ten' is not a whole number" in message


def test_invalid_toml_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "kbc.toml").write_text("[analyze\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(tmp_path, env={})


def test_list_settings_read_comma_separated_environment(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, env={"KBC_EXCLUDE": "vendor/, docs/*.py"})
    assert settings.exclude == ("vendor/", "docs/*.py")


def test_every_setting_is_declared_once() -> None:
    # what loading found, the [[knowledge]] tables (tested in test_team_knowledge) and the
    # [[repositories]] tables (tests/unit/test_workspace_parts.py)
    structured = {"notices", "knowledge", "forget_knowledge", "repositories"}
    declared = sorted(f.name for f in fields(Settings) if f.name not in structured)
    assert sorted(f.name for f in FIELDS) == declared


def test_shipped_example_lists_the_defaults() -> None:
    assert (ROOT / "config" / "kbc.example.toml").read_text() == defaults_as_toml()


def test_numbers_and_switches_from_every_source(tmp_path: Path) -> None:
    (tmp_path / "kbc.toml").write_text("[refresh]\nfull_rebuild_fraction = 0.5\nauto = true\n")
    settings = load_settings(tmp_path, env={"KB_FULL_REBUILD_FILES": "40"})
    assert (settings.full_rebuild_fraction, settings.full_rebuild_files, settings.auto_refresh) == (
        0.5,
        40,
        True,
    )
    settings = load_settings(tmp_path, env={"KB_FULL_REBUILD_FRACTION": "1", "KB_AUTO_REFRESH": "off"})
    assert (settings.full_rebuild_fraction, settings.auto_refresh) == (1.0, False)
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path, env={"KB_FULL_REBUILD_FRACTION": "a third", "KB_AUTO_REFRESH": "maybe"})
    assert "'a third' is not a number" in str(caught.value)
    assert "'maybe' is not true or false" in str(caught.value)


HOSTILE = (
    '[llm]\nmodel = "openai/gpt-4o"\napi_base = "http://attacker.example/v1"\n'
    '[store]\npath = "/tmp/elsewhere"\n'
)


@pytest.mark.parametrize("name", ["kbc.toml", "pyproject.toml"])
def test_a_repository_cannot_set_where_data_or_credentials_go(tmp_path: Path, name: str) -> None:
    text = (
        HOSTILE
        if name == "kbc.toml"
        else HOSTILE.replace("[llm]", "[tool.kbc.llm]").replace("[store]", "[tool.kbc.store]")
    )
    (tmp_path / name).write_text(
        text + ("[graph]\n" if name == "kbc.toml" else "[tool.kbc.graph]\n") + "module_split_files = 3\n"
    )
    settings = load_settings(tmp_path, env={})
    assert (settings.llm_model, settings.llm_api_base, settings.store) == ("", "", "")
    assert settings.module_split_files == 3  # the rest of the repository's configuration still applies
    assert len(settings.notices) == 3
    notice = next(n for n in settings.notices if "llm.api_base" in n)
    assert "'http://attacker.example/v1' ignored" in notice
    assert "KBC_LLM_API_BASE" in notice and f'repositories = ["{tmp_path.resolve()}"]' in notice


def test_the_user_configuration_and_environment_set_trusted_fields(tmp_path: Path) -> None:
    repo, home = tmp_path / "repo", tmp_path / "home"
    repo.mkdir()
    (home / ".config" / "kbc").mkdir(parents=True)
    (home / ".config" / "kbc" / "config.toml").write_text(
        '[llm]\nmodel = "ollama/llama3"\napi_base = "http://127.0.0.1:11434"\n[analyze]\nworkers = 2\n'
    )
    (repo / "kbc.toml").write_text("[analyze]\nworkers = 5\n")
    settings = load_settings(repo, env={"HOME": str(home), "KBC_STORE": str(tmp_path / "s")})
    assert (settings.llm_model, settings.llm_api_base, settings.store, settings.workers) == (
        "ollama/llama3",
        "http://127.0.0.1:11434",
        str(tmp_path / "s"),
        2,
    )
    (notice,) = settings.notices  # the repository's own workers: a limit is the user's
    assert "analyze.workers = 5 ignored" in notice and "cannot decide what this machine spends" in notice


def test_a_trusted_repository_sets_every_field(tmp_path: Path) -> None:
    (tmp_path / "kbc.toml").write_text(HOSTILE)
    user = tmp_path / "user.toml"
    user.write_text(f'[trust]\nrepositories = ["{tmp_path}"]\n')
    settings = load_settings(tmp_path, env={"KBC_CONFIG": str(user)})
    assert (settings.llm_api_base, settings.store) == ("http://attacker.example/v1", "/tmp/elsewhere")
    settings = load_settings(tmp_path, env={"KBC_TRUST_REPOSITORIES": str(tmp_path)})
    assert settings.llm_model == "openai/gpt-4o" and settings.notices == ()


@pytest.mark.parametrize(
    ("value", "kept"), [("build/kbc", True), ("../outside", False), ("~/store", False), ("link/store", False)]
)
def test_a_repository_may_keep_its_store_inside_itself(tmp_path: Path, value: str, kept: bool) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "link").symlink_to(tmp_path)
    (repo / "kbc.toml").write_text(f'[store]\npath = "{value}"\n')
    settings = load_settings(repo, env={})
    assert (settings.store == value) is kept
    assert bool(settings.notices) is not kept


def test_a_committed_store_link_out_of_the_repository_is_refused(tmp_path: Path) -> None:
    from kbc.store.layout import store_path

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".kbc").symlink_to(tmp_path)
    with pytest.raises(ConfigError, match="outside the repository"):
        store_path(repo, Settings())


def test_keys_and_endpoints_come_from_the_settings_table_and_are_never_printed(tmp_path: Path) -> None:
    (tmp_path / "kbc.toml").write_text(
        '[llm]\napi_key = "sk-from-the-repository-0123456789"\n'
        '[index]\nchroma_url = "http://attacker.example:8000"\n'
    )
    env = {
        "KBC_LLM_API_KEY": "sk-user-0123456789abcdef",
        "KBC_TOKEN": "a-long-enough-token-123",
        "KBC_EMBED_MODEL": "none",
        "KBC_CACHE_DIR": str(tmp_path / "cache"),
        "KBC_DATA_DIR": str(tmp_path / "data"),
    }
    settings = load_settings(tmp_path, env=env)
    assert (settings.llm_api_key, settings.token, settings.embed_model, settings.chroma_url) == (
        "sk-user-0123456789abcdef",
        "a-long-enough-token-123",
        "none",
        "",
    )
    assert (settings.cache_dir, settings.data_dir) == (str(tmp_path / "cache"), str(tmp_path / "data"))
    assert "sk-user" not in repr(settings) and "a-long-enough" not in repr(settings)
    assert "sk-from-the-repository" not in " ".join(settings.notices)
    assert any("llm.api_key = '…' ignored" in n for n in settings.notices)
    assert any("index.chroma_url = 'http://attacker.example:8000' ignored" in n for n in settings.notices)


def test_nothing_outside_the_settings_module_reads_or_writes_the_environment() -> None:
    import re

    reads = re.compile(r"os\.environ|os\.getenv|os\.putenv")
    offenders = []
    for path in sorted((ROOT / "kbc").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative == "kbc/domain/settings.py" or relative.startswith("kbc/analyzers/python/"):
            continue  # the analyzers name os.environ as what they find in analyzed code
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if reads.search(line) and not line.lstrip().startswith(("#", '"', "'")) and "``" not in line:
                offenders.append(f"{relative}:{number}")
    assert offenders == []


def test_a_repository_sets_no_resource_limit(tmp_path: Path) -> None:
    (tmp_path / "kbc.toml").write_text(
        "[analyze]\nworkers = 64\n[discover]\nmax_file_bytes = 100000000000\n[serve]\nmax_sessions = 1\n"
        "session_idle_seconds = 99999\n[llm]\nconcurrency = 500\ntimeout = 86400\nretries = 50\n"
        "[refresh]\nlock_timeout = 86400\n[gaps]\nretention_days = 100000\n"
    )
    settings = load_settings(tmp_path, env={})
    defaults = Settings()
    limits = (
        "workers",
        "max_file_bytes",
        "max_sessions",
        "session_idle_seconds",
        "llm_concurrency",
        "llm_timeout",
        "llm_retries",
        "lock_timeout",
        "gap_retention_days",
    )
    assert [getattr(settings, name) for name in limits] == [getattr(defaults, name) for name in limits]
    assert len(settings.notices) == 9 and all("what this machine spends" in n for n in settings.notices)
    assert load_settings(tmp_path, env={"KBC_WORKERS": "3"}).workers == 3  # the user's own


@pytest.mark.parametrize(
    ("value", "kept"),
    [
        (".", False),
        (".git", False),
        (".git/kbc", False),
        ("src", False),
        ("src/new", True),
        ("store", True),
        ("old-store", True),
    ],
)
def test_a_repository_keeps_its_store_in_a_folder_of_its_own(tmp_path: Path, value: str, kept: bool) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("X = 1\n")
    (tmp_path / "old-store").mkdir()
    (tmp_path / "old-store" / ".gitignore").write_text(f"{STORE_MARK}: generated\n*\n")
    (tmp_path / "kbc.toml").write_text(f'[store]\npath = "{value}"\n')
    settings = load_settings(tmp_path, env={})
    assert (settings.store == value) is kept
    if not kept:
        (notice,) = settings.notices
        assert "may only keep its store in a new folder inside it" in notice
