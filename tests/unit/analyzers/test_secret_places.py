"""Where a finding stands: tests and examples, public and private key material, prose, doctests,
example blocks; and the files that are secrets by nature."""

import pytest

from kbc.analyzers.secret_places import made_up, place_of, secret_by_nature

BODY = "5+7nYV7zXzDkm0guFcrnUAcgHhJhew/tp+Fkd5b/AivqjtAqgqF1kw8jN803lMUi"


@pytest.mark.parametrize(
    ("where", "whose"),
    [
        ("tests/test_auth.py", "a test's"),
        ("t/unit/security/__init__.py", "a test's"),
        ("src/pkg/fixtures/keys.json", "a test's"),
        ("conftest.py", "a test's"),
        ("examples/server.py", "an example's"),
        ("docs_src/security/tutorial004.py", "an example's"),
        ("botocore/data/iam/2010-05-08/examples-1.json", "an example's"),
        ("dummyserver/certs/server.key", "an example's"),
        ("app/settings.py", None),
        ("docs/setup.md", None),
        ("src/attestation/keys.py", None),
    ],
)
def test_tests_and_examples_are_told_by_their_path(where: str, whose: str | None) -> None:
    assert made_up(where) == whose


def test_public_key_material_is_told_from_private_keys() -> None:
    lines = [
        "-----BEGIN CERTIFICATE-----",
        BODY,
        "-----END CERTIFICATE-----",
        'KEY = """-----BEGIN RSA PRIVATE KEY-----',
        BODY,
        BODY,
        '-----END RSA PRIVATE KEY-----"""',
        "_START = b'-----BEGIN OPENSSH PRIVATE KEY-----'",
        "x = 1",
        'inline = "-----BEGIN PRIVATE KEY-----\\n' + BODY + '\\n-----END PRIVATE KEY-----\\n"',
        "A key looks like: -----BEGIN RSA PRIVATE KEY----- MIIEpQIBAAKCAQEAuyf/lNrH9ck8DmNyo3fGgvCI1l9s+"
        "cmBY3WIz+cUDqmxiieR -----END RSA PRIVATE KEY-----",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl me@host",
    ]
    place = place_of(lines, "python", "app/keys.py")
    assert place.public == {1, 2, 3, 12}
    assert {n: place.private[n] for n in (4, 5, 6, 7)} == dict.fromkeys((4, 5, 6, 7), (4, None))
    assert place.private[8] == (8, "a private key header with no key material")
    assert place.private[10] == (10, None)  # a key written on one line, newlines escaped
    assert place.private[11] == (11, "an example's key, cut short")  # its DER says 1189 bytes


def test_an_encrypted_private_key_is_no_key_by_itself() -> None:
    lines = ["-----BEGIN ENCRYPTED PRIVATE KEY-----", BODY, "-----END ENCRYPTED PRIVATE KEY-----"]
    assert place_of(lines, "text", "keys/server.key").private[1] == (1, "an encrypted private key")


def test_doctests_console_sessions_and_blocks_shown_as_examples() -> None:
    lines = [
        '"""Sorting.',  # 1
        "",
        "    >>> ''.join(soft_sorted('za1'))",  # 3
        "    'aA1023456789cCdDeEfFbB'",  # 4
        "",
        "For example::",  # 6
        "",
        '    {"access_token": "2YotnFZFEjr1zCsicMWpAA"}',  # 8
        "",
        "The token::",  # 10
        "",
        "    token = 'kT9xP2mQ7vR4wL8nB3cF6hJ1sD5gA0zYe'",  # 12
        '"""',
        "API_KEY = 'kT9xP2mQ7vR4wL8nB3cF6hJ1sD5gA0zYe'",  # 14: code
    ]
    place = place_of(lines, "python", "lib/sorting.py")
    assert {3, 4, 6, 8} <= place.examples and not {12, 14} & place.examples
    assert place.in_prose(12) and not place.in_prose(14)


def test_sphinx_test_blocks_are_examples_and_an_example_host_is_no_example_word() -> None:
    lines = [
        ".. testsetup::",
        "",
        "    key = load(PEM)",  # 3
        "",
        "The [dashboard](https://admin:pw@dash.example.com) shows it:",
        "",
        "```",
        "export TOKEN=abc",  # 8
        "```",
    ]
    place = place_of(lines, "rst", "docs/setup.rst")
    assert 3 in place.examples and 8 not in place.examples


@pytest.mark.parametrize(
    ("path", "nature"),
    [
        (".env", "an environment file"),
        ("deploy/.env.production", "an environment file"),
        ("config/prod.env", "an environment file"),
        ("certs/server.pem", "a key file"),
        ("keys/id_ed25519", "a key file"),
        ("release.keystore", "a key file"),
        (".netrc", "a credentials file"),
        ("ops/.aws/credentials", "a credentials file"),
        (".env.example", None),
        ("id_rsa.pub", None),
        ("app/settings.py", None),
        ("docs/environment.md", None),
    ],
)
def test_files_that_are_secrets_by_nature(path: str, nature: str | None) -> None:
    assert secret_by_nature(path) == nature
