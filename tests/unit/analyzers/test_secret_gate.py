"""The gate hands detect-secrets every line any of its plugins fires on, and little else."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.planted import planted

VALUES = planted()[1]
FIRING = [
    f'api_key = "{VALUES["py_hex_key"]}"',
    f'password = "{VALUES["py_password"]}"',
    f'AWS = "{VALUES["py_aws_access"]}"',
    f'aws_secret_access_key = "{VALUES["py_aws_secret"]}"',
    f'TOKEN = "{VALUES["py_github_comment"]}"',
    f'hook = "https://hooks.slack.com/services/{VALUES["py_slack_webhook"]}"',
    f'stripe.api = "{VALUES["py_stripe"]}"',
    f'jwt = "{VALUES["py_jwt"]}"',
    f'url = "postgres://admin:{VALUES["py_db_url_password"]}@db.example.com/app"',
    "-----BEGIN RSA PRIVATE KEY-----",
    'blob = "' + VALUES["py_docstring_key"] + '"',
    'build = "4f9c2a7e1d0b3c5a"',
    'gitlab = "glpat-' + VALUES["py_stripe"][-20:] + '"',  # a pattern searched line by line
    'if "Hx7Lp2Qm9Rt4Vw8Z" == secret:',
    "AccountKey=" + "A1b2C3d4E5f6G7h8" * 5 + "A1b2C3d4",
    'contraseña = "Zq8kLm2vT9wXr4Qp"',
    'PASSWORD = "Zq8kLm2vT9wXr4Qp"',
]
PLAIN = [
    "maximum_weighted_matching_of_the_graph = weighted_matching",
    "#: sphinx/builders/html/__init__.py:1040",
    "return self.ASTNestedNameSpecifier(names, templates, rooted)",
    'msgstr "Mot de passe"',
]


def _fires(path: str, line: str) -> bool:
    from detect_secrets.core.scan import _process_line_based_plugins

    return any(True for _ in _process_line_based_plugins([(1, line)], filename=path))


@pytest.mark.parametrize("line", FIRING)
def test_every_line_a_plugin_fires_on_passes_the_gate(line: str) -> None:
    from kbc.analyzers.secret_scan import _configure, gate

    _configure()
    assert _fires("settings.py", line), line  # the sample is a real finding
    assert gate().passing([line]) == [True]


def test_lines_no_plugin_fires_on_are_kept_back() -> None:
    from kbc.analyzers.secret_scan import _configure, gate

    _configure()
    assert not any(_fires("settings.py", line) for line in PLAIN)
    assert gate().passing(PLAIN) == [False] * len(PLAIN)
    assert gate().passing([*PLAIN, FIRING[0]]) == [False] * len(PLAIN) + [True]


def test_an_allowlist_pragma_covers_the_line_after_it_only(tmp_path: Path) -> None:
    from kbc.analyzers.secret_scan import _scan, raw_findings

    secret = f'password = "{VALUES["py_password"]}"'
    text = "\n".join(
        [
            "# pragma: allowlist nextline secret",
            secret,  # allowlisted
            "# pragma: allowlist nextline secret",
            "value = compute_the_weighted_matching_of(graph)",
            secret,  # not: the pragma is two lines up
        ]
    )
    path = tmp_path / "settings.py"
    path.write_text(text)
    lines = text.split("\n")
    every_line = _scan(str(path), list(enumerate(lines, start=1)))
    assert [n for n, _, _ in every_line] == [5]
    found = raw_findings(str(path), text, "python", lines)
    kinds = {kind for _, kind, _ in every_line}
    assert {(n, kind, value) for n, kind, value in found if kind in kinds} == set(every_line)
