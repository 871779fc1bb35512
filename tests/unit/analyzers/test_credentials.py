"""kbc's own credential detectors: the forms detect-secrets misses, and none of the code
lines that merely talk about credentials."""

import pytest

from kbc.analyzers.credentials import find_credentials

KEY = "kT9xP2mQ7vR4wL8nB3cF6hJ1sD5gA0zYe"


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("export OPENAI_API_KEY=sk-proj-" + KEY, "sk-proj-" + KEY),
        (
            "ENV API_TOKEN=3f9a0c1d2e4b5a6978c0d1e2f3a4b5c6d7e8f901",
            "3f9a0c1d2e4b5a6978c0d1e2f3a4b5c6d7e8f901",
        ),
        ("ENV DB_PASSWORD s3cretPassw0rd99", "s3cretPassw0rd99"),
        ('    """' + KEY + ' is the signing key."""', KEY),
        ('api_key = \\"0123456789abcdef0123456789abcdef\\"\\n",', "0123456789abcdef0123456789abcdef"),
        ("curl -H 'Authorization: Bearer a1B2c3D4e5F6g7H8i9J0k1L2' https://x", "a1B2c3D4e5F6g7H8i9J0k1L2"),
        ("https://admin:hunter2go@example.com/x", "hunter2go"),
        (
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        ),
    ],
)
def test_each_form_is_found_with_its_whole_value(line: str, value: str) -> None:
    assert value in {v for _, _, v in find_credentials([line])}


def test_a_yaml_block_scalar_under_a_credential_key_is_found() -> None:
    lines = ["db:", "  password: >-", "    folded-Secret-1234", "    second-line-5678", "  user: app"]
    assert [(n, v) for n, _, v in find_credentials(lines)] == [
        (3, "folded-Secret-1234"),
        (4, "second-line-5678"),
    ]


@pytest.mark.parametrize(
    "line",
    [
        'user_api_key_dict: "UserAPIKeyAuth",',
        "password = get_password(user)",
        'tokenizer = "unicode61"',
        '"token-efficient-tools-2025-02-19": "token-efficient-tools-2025-02-19",',
        "max_tokens: 4096",
        'TOKEN_COUNT = "llm.token_count.completion"',
        "api_key = os.environ['OPENAI_API_KEY']",
        "secret_key = settings.SECRET_KEY",
        "if password == expected_password_2:",
        "class LlamaGuard38bFilterConfig(BaseModel):",
        "See https://www.sciencedirect.com/science/article/pii/S157086670400019X for the proof.",
        'SALT_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"',
        'headers = {"Authorization": f"Bearer {token}"}',
        "Authorization: Bearer <your-token-here>",
    ],
)
def test_code_about_credentials_is_not_a_credential(line: str) -> None:
    assert find_credentials([line], python=True) == []
    assert find_credentials([line]) == []


LONG_LINES = (  # 400,000 characters on one line, each shape one a pattern spent quadratic time on
    '"x" * 400_000',
    '"a." * 200_000',
    '"ab+" * 133_334',
    '"secret_token" * 33_334',
    '"https://" + "a" * 400_000',
    '"api_key" + "-" * 400_000',
)


@pytest.mark.parametrize("shape", LONG_LINES)
def test_one_long_line_is_scanned_in_one_pass(shape: str) -> None:
    # In a process of its own that must finish within a minute: a scan that looks back over
    # the line at every character needs hours here, a linear one a fraction of a second.
    import subprocess
    import sys

    script = f"from kbc.analyzers.credentials import find_credentials\nfind_credentials([{shape}])\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-500:]


def test_a_credential_beside_a_long_run_is_still_found() -> None:
    found = find_credentials(["url = https://user:hunter2secret@example.com/x " + "a." * 10_000])
    assert [value for _, _, value in found] == ["hunter2secret"]
