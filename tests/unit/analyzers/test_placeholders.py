"""A value read alone: what can be a credential and what is a placeholder, a name or data."""

import pytest

from kbc.analyzers.placeholders import issued, placeholder, random_run, secret_like, text_of


@pytest.mark.parametrize(
    "value",
    [
        "pass",  # under 8 characters
        "somepassword",  # words
        "password123",  # the words placeholders are made of, and a sequence
        "p@ssw0rd",
        "tiger^5HHH",  # scott/tiger
        "s3cr3tValue!",
        "MySekretPa$$word",
        "changeme-please",
        "example-key-123",  # says so
        "<your-api-key>",
        "${DATABASE_PASSWORD}",
        "%(password)s",
        "xxxxxxxxxxxx",
        "secret_key",  # a name
        "settings.SECRET_KEY",
        "pyo3::Bound<'p, PyAny>",
        "get_password(user",
        "AccountKey=",
        "https://oauth2.example.com/tokeninfo",  # a URL, a path, an e-mail address
        "/etc/ssl/server.pem:extraCertChain=/etc/ssl/chain.pem",
        "twisted@twistedmatrix.com",
        "pbkdf2_sha256$30000$Vo0VlMnkR4Bk$qEvtdyZRWTcOsCnI",  # a password hash
        "2016-09-08T21:47:36Z",  # a date
        "The password for the kmsuser account",  # prose
        "ap-south-1:111122223333:secret:snowflake-XHb67j",  # an ARN's tail
    ],
)
def test_placeholders_names_and_data_are_not_secret_like(value: str) -> None:
    assert not secret_like(value)


@pytest.mark.parametrize(
    "value",
    [
        "Tr0ub4dor&3UWiy77",
        "hunter2isnotgood",
        "correct-horse-staple-91",  # a passphrase
        "nbpass-vSijnYPIxz",
        "django-insecure-06i(fq!b1r1pg%&0*c8r-4&o98c9*5lfqi#f%454",
        "hvs.5RuHzOUv5zMfp5SHWlj6tgIZ",
        "Vq7-Lm2x-R9tK-wZ4p",
    ],
)
def test_passwords_and_keys_someone_means_are_secret_like(value: str) -> None:
    assert secret_like(value)


def test_a_random_run_is_told_from_words_and_sequences() -> None:
    assert random_run("kT9xP2mQ7vR4wL8nB3cF6hJ1sD5gA0zYe", 16)
    assert random_run("vSijnYPIxzQwKbLm", 12)  # letters only, both cases, few vowels
    assert not random_run("challengePassword", 12)  # camelCase words
    assert not random_run("SomeKindOfPassword", 12)
    assert not random_run("1234567890abcdef", 12)  # a sequence
    assert not random_run("aaaaaaaaaaaaaaaa", 12)
    assert not random_run("kT9xP2mQ7v", 12)  # too short


def test_an_issued_token_needs_a_random_part() -> None:
    assert issued("ghp_R8vKq2LmZt5Yx9Wn3Hb7Jc1Pd4Fs6Ga0Eu2Q")
    assert not issued("sk-ecdsa-sha2-nistp256-cert-v01")  # an SSH key type
    assert not issued("xoxb-1234-1243")
    assert not issued("pk_live_51H8n2kLm9Qx7Rt3Yv6Bw0")  # publishable: public by design


def test_markers_and_encoded_text() -> None:
    assert placeholder("AKIAIOSFODNN7EXAMPLE") and placeholder("sk_test_4eC39HqLyjWDarjtT1zdp7dc")
    assert not placeholder("AKIAUJZDEGXDNCF32EPF")
    assert text_of("dXNlcjpwYXNz") == "user:pass"
    assert text_of("5+7nYV7zXzDkm0guFcrnUAcgHhJhew/tp+Fkd5b/") is None
