"""Settings: defaults < pyproject [tool.kbc] < kbc.toml < environment < flags."""

from dataclasses import fields
from pathlib import Path

import pytest

from kbc.domain.errors import ConfigError
from kbc.domain.settings import FIELDS, Settings, defaults_as_toml, load_settings

ROOT = Path(__file__).resolve().parents[3]


def test_defaults_apply_without_any_source(tmp_path: Path) -> None:
    assert load_settings(tmp_path, env={}) == Settings()


def test_each_source_overrides_the_one_below(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.kbc.analyze]\nworkers = 3\nsource_roots = ['lib']\n[tool.kbc.graph]\nmax_modules = 7\n")
    (tmp_path / "kbc.toml").write_text("[analyze]\nworkers = 4\n[graph]\nmodule_split_files = 9\n")
    env = {"KB_MODULE_SPLIT_FILES": "11", "KNOWLEDGE_MAX_MODULES": "12", "KBC_WORKERS": "5"}
    settings = load_settings(tmp_path, env=env, overrides={"workers": 6, "max_file_bytes": None})
    assert (settings.source_roots, settings.max_modules, settings.module_split_files,
            settings.workers) == (("lib",), 12, 11, 6)


def test_every_bad_field_is_reported_at_once(tmp_path: Path) -> None:
    (tmp_path / "kbc.toml").write_text(
        "[analyze]\nworkers = 'many'\nthreads = 2\n[graph]\nmax_modules = 0\n[colour]\nx = 1\n")
    env = {"KBC_MAX_FILE_BYTES": "ten", "KB_MODULE_SPLIT_FILES": "-1"}
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path, env=env, overrides={"workers": -3})
    problems = {(e.source, e.field) for e in caught.value.errors}
    assert problems == {
        ("kbc.toml", "analyze.workers"), ("kbc.toml", "analyze.threads"),
        ("kbc.toml", "graph.max_modules"), ("kbc.toml", "colour"),
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
    assert sorted(f.name for f in FIELDS) == sorted(f.name for f in fields(Settings))


def test_shipped_example_lists_the_defaults() -> None:
    assert (ROOT / "config" / "kbc.example.toml").read_text() == defaults_as_toml()


def test_numbers_and_switches_from_every_source(tmp_path: Path) -> None:
    (tmp_path / "kbc.toml").write_text("[refresh]\nfull_rebuild_fraction = 0.5\nauto = true\n")
    settings = load_settings(tmp_path, env={"KB_FULL_REBUILD_FILES": "40"})
    assert (settings.full_rebuild_fraction, settings.full_rebuild_files,
            settings.auto_refresh) == (0.5, 40, True)
    settings = load_settings(tmp_path, env={"KB_FULL_REBUILD_FRACTION": "1", "KB_AUTO_REFRESH": "off"})
    assert (settings.full_rebuild_fraction, settings.auto_refresh) == (1.0, False)
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path, env={"KB_FULL_REBUILD_FRACTION": "a third", "KB_AUTO_REFRESH": "maybe"})
    assert "'a third' is not a number" in str(caught.value)
    assert "'maybe' is not true or false" in str(caught.value)
