"""What the screen takes for a credential once the detectors' findings are judged: the planted
credentials, never a library's placeholders, examples, fixtures or public material."""

from pathlib import Path

import pytest
from planted import planted

from kbc.analyzers.discover import language_of
from kbc.analyzers.secrets import MARK, file_findings, redact

FILES, VALUES = planted()
# Found in the file where they are written (the staging password of docs/setup.md is the
# settings' password, found there and redacted here as a value found elsewhere).
ELSEWHERE = {("docs/setup.md", "py_password")}


def _write(tmp_path: Path, rel: str, text: str) -> str:
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("rel", sorted(FILES))
def test_every_planted_credential_is_found_in_its_own_file(tmp_path: Path, rel: str) -> None:
    text = FILES[rel]
    language = language_of(rel, text.encode())
    redacted = redact(_write(tmp_path, rel, text), text, language, where=rel).text
    for name, value in VALUES.items():
        if value in text and (rel, name) not in ELSEWHERE:
            assert value not in redacted, name
    assert redacted.count("\n") == text.count("\n")


BOLTONS_LIKE = '''"""URL utilities.

A URL's parts, as RFC 3986 names them::

    foo://user:pass@example.com:8042/over/there?name=ferret#nose
"""
import base64

GREETING = base64.b64decode("SGVsbG8sIHdvcmxkISBUaGlzIGlzIGEgdGVzdCBvZiBxdW90aW5nLg==")
EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
PROXY = "http://username:password@proxy.example.com:3128"
DEFAULTS = {"user": "scott", "password": "tiger"}


def soft_sorted(iterable):
    """Sorted.

    >>> ''.join(soft_sorted(string.hexdigits))
    'aA1023456789cCdDeEfFbB'
    """
'''


def test_a_library_module_of_placeholders_examples_and_data_has_no_credential(tmp_path: Path) -> None:
    rel = "boltons/urlutils.py"
    assert file_findings(_write(tmp_path, rel, BOLTONS_LIKE), BOLTONS_LIKE, "python", where=rel) == []
    assert redact(str(tmp_path / rel), BOLTONS_LIKE, "python", where=rel).text == BOLTONS_LIKE


def test_in_tests_only_a_token_in_an_issuer_s_format_is_kept(tmp_path: Path) -> None:
    token = VALUES["py_github_comment"]
    text = (
        'PASSWORD = "Xk9qT2mR7zLw4"\n'
        'API_KEY = "kT9xP2mQ7vR4wL8nB3cF6hJ1sD5gA0zYe"\n'
        'SIGNING = "-----BEGIN PRIVATE KEY-----\\n'
        + "5+7nYV7zXzDkm0guFcrnUAcgHhJhew/tp+Fkd5b/"
        * 2
        + '\\n-----END PRIVATE KEY-----"\n'
        f'GITHUB_TOKEN = "{token}"\n'
    )
    for rel in ("tests/test_client.py", "app/client.py"):
        found = {
            number for number, _, _ in file_findings(_write(tmp_path, rel, text), text, "python", where=rel)
        }
        assert found == ({4} if rel.startswith("tests/") else {1, 2, 3, 4}), rel


def test_a_value_shown_as_an_example_is_one_wherever_the_document_shows_it(tmp_path: Path) -> None:
    key = "192b9bdd22ab9ed4d12e236c78afcb9a393ec15f71bbf5dc987d54727823bcbf"
    doc = (
        "Generate a key::\n\n"
        f"    $ python -c 'import secrets; print(secrets.token_hex())'\n    '{key}'\n\n"
        "Then set it:\n\n.. code-block:: python\n\n"
        f"    SECRET_KEY = '{key}'\n"
    )
    assert file_findings(_write(tmp_path, "docs/config.rst", doc), doc, "rst", where="docs/config.rst") == []
    # the same assignment in code is a credential
    code = f"SECRET_KEY = '{key}'\n"
    rel = "app/settings.py"
    assert MARK in redact(_write(tmp_path, rel, code), code, "python", where=rel).text


LONG_LINES = (  # 400,000 characters and more on one line, each shape a pattern could look back over
    '"sk-" * 200_000',
    '"ecdsa-sha2-" + "a" * 400_000',
    '"-----BEGIN CERTIFICATE-----" + "A" * 400_000',
    '">>> " + "a:" * 200_000',
    '"For example::" + " x" * 200_000',
)


@pytest.mark.parametrize("shape", LONG_LINES)
def test_one_long_line_is_judged_in_one_pass(shape: str) -> None:
    # In a process of its own that must finish within a minute: a pattern that looks back over
    # the line at every character needs hours here, a linear one a second or two.
    import subprocess
    import sys

    script = (
        "from kbc.analyzers.credibility import judged\n"
        f"line = {shape}\n"
        "judged([(1, 'Secret Keyword', line), (2, 'Base64 High Entropy String', line)],"
        " [f'password = {line!r}', line], 'python', 'app/x.py')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-500:]
