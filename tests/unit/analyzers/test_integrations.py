"""Integrations: external packages, service clients and environment variables."""

from helpers import RepoFactory, analyze_repo, facts_of


def found(source: str) -> list[tuple[str, str, str]]:
    return [(i.kind, i.name, i.symbol) for i in facts_of(source).integrations]


def test_environment_variables_read_every_common_way() -> None:
    assert found("""
        import os
        from os import environ, getenv

        A = os.environ["A"]
        def config():
            b = os.getenv("B", "x")
            c = environ.get("C")
            d = getenv("D")
            return os.environ.setdefault("E", "1")
    """) == [
        ("env_var", "A", "pkg.mod"),
        ("env_var", "B", "pkg.mod.config"),
        ("env_var", "C", "pkg.mod.config"),
        ("env_var", "D", "pkg.mod.config"),
        ("env_var", "E", "pkg.mod.config"),
    ]


def test_environment_variables_read_through_an_alias_or_by_membership() -> None:
    """rich's Console keeps ``os.environ`` in a class attribute (an instance may be given
    another mapping) and reads it by ``.get``, subscript and ``in``; a module may alias it."""
    assert found("""
        import os
        from typing import Mapping

        env = os.environ
        DEBUG = "DEBUG" in os.environ

        class Console:
            _environ: Mapping[str, str] = os.environ
            settings: dict = {}

            def __init__(self, _environ=None):
                if _environ is not None:
                    self._environ = _environ
                self.columns = self._environ.get("COLUMNS")
                self.plain = "NO_COLOR" not in self._environ
                self.term = self._environ["TERM"]
                self.theme = self.settings["theme"]

        def read(options):
            return env["HOME"], options["verbose"], "x" in options
    """) == [
        ("env_var", "DEBUG", "pkg.mod"),
        ("env_var", "COLUMNS", "pkg.mod.Console.__init__"),
        ("env_var", "NO_COLOR", "pkg.mod.Console.__init__"),
        ("env_var", "TERM", "pkg.mod.Console.__init__"),
        ("env_var", "HOME", "pkg.mod.read"),
    ]


def test_only_a_name_the_code_passes_is_an_environment_variable() -> None:
    """A literal or a constant names a variable; a parameter, a local, an attribute, a call or a
    name bound twice does not (the repository's `requests` read `env_name`, `key.upper()`)."""
    facts = facts_of("""
        import os
        TOKEN_VAR = "APP_TOKEN"
        CHANGED = "FIRST"
        CHANGED = "SECOND"
        SUFFIX = "_HOME"
        SUFFIX += "X"

        def read(name, key):
            local = "LOCAL_NAME"
            TOKEN_VAR = "SHADOWED"
            return (os.environ[name], os.getenv(key.upper()), os.environ.get(local),
                    os.getenv(TOKEN_VAR), os.getenv(CHANGED), os.getenv(SUFFIX), os.getenv(config.KEY))

        def token():
            return os.environ[TOKEN_VAR]
    """)
    assert [(i.name, i.detail, i.symbol) for i in facts.integrations] == [
        ("APP_TOKEN", "constant TOKEN_VAR", "pkg.mod.token")
    ]


def test_an_environment_variable_named_by_an_imported_constant_gets_its_value(make_repo: RepoFactory) -> None:
    root = make_repo(
        {
            "app/__init__.py": "",
            "app/names.py": 'HOME = "APP_HOME"\nDYNAMIC = compute()\n',
            "app/main.py": """
            import os
            from app.names import HOME, DYNAMIC
            from elsewhere import OUTSIDE

            def where():
                return os.getenv(HOME), os.getenv(DYNAMIC), os.getenv(OUTSIDE)
        """,
        }
    )
    (facts,) = [f for f in analyze_repo(root).facts() if f.path == "app/main.py"]
    assert [(i.kind, i.name, i.detail) for i in facts.integrations if i.kind == "env_var"] == [
        ("env_var", "APP_HOME", "constant app.names.HOME")
    ]


def test_http_database_and_queue_clients() -> None:
    assert found("""
        import requests, sqlite3, pika
        import httpx as h
        from sqlalchemy import create_engine

        def wire():
            requests.get("https://example.invalid")
            h.AsyncClient()
            sqlite3.connect("db.sqlite")
            create_engine("postgresql://")
            pika.BlockingConnection()
    """) == [
        ("http", "requests.get", "pkg.mod.wire"),
        ("http", "httpx.AsyncClient", "pkg.mod.wire"),
        ("database", "sqlite3.connect", "pkg.mod.wire"),
        ("database", "sqlalchemy.create_engine", "pkg.mod.wire"),
        ("queue", "pika.BlockingConnection", "pkg.mod.wire"),
    ]


def test_boto3_client_kind_follows_the_service() -> None:
    facts = facts_of("""
        import boto3
        queue = boto3.client("sqs")
    """)
    (item,) = facts.integrations
    assert (item.kind, item.detail) == ("queue", "service sqs")


def test_external_packages_are_named_by_distribution(make_repo: RepoFactory) -> None:
    root = make_repo(
        {
            "app/__init__.py": "",
            "app/main.py": """
            import json
            import yaml
            from app import helpers
            from requests.adapters import HTTPAdapter
        """,
            "app/helpers.py": "",
        }
    )
    (facts,) = [f for f in analyze_repo(root).facts() if f.path == "app/main.py"]
    kinds = [(i.module, i.kind, i.target, i.distribution) for i in facts.imports]
    assert kinds == [
        ("json", "stdlib", "", ""),
        ("yaml", "external", "", "PyYAML"),
        ("app", "internal", "app.helpers", ""),
        ("requests.adapters", "external", "", "requests"),
    ]
    packages = [(i.name, i.line) for i in facts.integrations if i.kind == "package"]
    assert packages == [("PyYAML", 2), ("requests", 4)]


def test_a_string_that_cannot_name_a_variable_is_no_constant_and_no_name() -> None:
    """pygments' table of Unicode ranges holds lone surrogates: no fact may carry them."""
    facts = facts_of("""
        import os
        RANGES = "\\ud800-\\udbff"
        SPACED = "two words"

        def read():
            return os.getenv(RANGES), os.getenv(SPACED), os.getenv("\\udc00")
    """)
    assert facts.constants == () and facts.integrations == ()


def test_a_docstring_with_a_lone_surrogate_is_stored_and_read_back(make_repo: RepoFactory) -> None:
    source = '"""Ranges from \\ud800 on."""\n\ndef f():\n    """Up to \\udfff."""\n'
    root = make_repo({"ranges.py": source})
    (facts,) = analyze_repo(root).facts()
    assert facts.doc == "Ranges from \ud800 on." and facts.symbols[0].doc == "Up to \udfff."
