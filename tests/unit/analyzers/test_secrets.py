"""Redaction: planted credentials of every common kind never survive."""

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kbc.analyzers.secret_scan import is_indirect_reference
from kbc.analyzers.secrets import MARK, redact

FAKES = {
    "aws_key": 'AWS_ACCESS_KEY_ID = "AKIAUJZDEGXDNCF32EPF"\n',
    "aws_secret": 'aws_secret_access_key = "2hpChYgCfrL1spNxnyVmihA+2O76UMFxFkM+R5Kj"\n',
    "github": 'GITHUB_TOKEN = "ghp_R8vKq2LmZt5Yx9Wn3Hb7Jc1Pd4Fs6Ga0Eu2Q"\n',
    "slack": 'HOOK = "https://hooks.slack.com/services/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"\n',
}
SECRET_VALUES = [
    "AKIAUJZDEGXDNCF32EPF",
    "2hpChYgCfrL1spNxnyVmihA+2O76UMFxFkM+R5Kj",
    "ghp_R8vKq2LmZt5Yx9Wn3Hb7Jc1Pd4Fs6Ga0Eu2Q",
    "T0H60KVJ5/B00CE9UVW/MFLZDe1f8rESQedUStPKR0Cs",
]
PEM = (
    'KEY = """\n-----BEGIN RSA PRIVATE KEY-----\n'
    "5+7nYV7zXzDkm0guFcrnUAcgHhJhew/tp+Fkd5b/AivqjtAqgqF1kw8jN803lMUi\n"
    "CABtaxrwwMvWJWWKrCyfqgfRPER+MwUe7vlaYOVhQ9bEO8rXbACKmwprX8kzFUpt\n"
    '-----END RSA PRIVATE KEY-----\n"""\n'
)


@pytest.mark.parametrize("name", sorted(FAKES))
def test_planted_credentials_in_code_are_redacted(name: str) -> None:
    result = redact("settings.py", "import os\n" + FAKES[name] + "DEBUG = True\n")
    assert MARK in result.text
    assert not any(value in result.text for value in SECRET_VALUES)
    assert result.text.count("\n") == 3 and "DEBUG = True" in result.text
    assert [line for line, _ in result.findings] == [2]


def test_a_private_key_block_is_redacted_header_to_footer() -> None:
    result = redact("keys.py", PEM)
    lines = result.text.split("\n")
    assert lines[0] == 'KEY = """' and lines[5] == '"""'
    assert lines[1:5] == [MARK] * 4


def test_dotenv_lines_are_redacted_through_the_config_reader(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("DATABASE_PASSWORD=hunter2isnotgood\nDEBUG=true\n")
    result = redact(str(env), env.read_text(), "text")
    assert result.text == f"DATABASE_PASSWORD={MARK}\nDEBUG=true\n"


WHOLE_FILES = {
    "deploy.yaml": (
        "steps:\n  - run: |\n      export API_KEY=9f3a7c1e5b2d4f6a8c0e\n      make\n"
        "password: hunter2isnotgood\nhost: 203.0.113.77\nname: plain\n"
    ),
    "settings.ini": "[db]\nuser = app\npassword = s3cr3tValue!\nchecksum = 0a1b2c3d4e5f\n",
    "notes.txt": "Ping 8.8.8.8 first.\nThe build id is 4f9c2a7e1d.\nnothing here\n" * 3,
    "messages.po": 'msgid "Password"\nmsgstr "Mot de passe"\n\nmsgid "Key"\nmsgstr "Cle"\n',
    "package-lock.json": '{"integrity": "sha512-SRXjM+tfsSlA9VuG8hGO2nft2p8zjXCK1VcC6N4NXbBb=="}\n',
    "token.env": "AP6xAbCdEfGh12\nGITHUB=ghp_R8vKq2LmZt5Yx9Wn3Hb7Jc1Pd4Fs6Ga0Eu2Q\n",
}


@pytest.mark.parametrize("name", sorted(WHOLE_FILES))
def test_a_whole_file_screened_finds_what_detect_secrets_finds_reading_it_all(
    tmp_path: Path, name: str
) -> None:
    from detect_secrets.core.scan import scan_file

    from kbc.analyzers.secret_scan import _configure, _scan_whole_file

    path = tmp_path / name
    path.write_text(WHOLE_FILES[name])
    _configure()
    expected = sorted(
        (s.line_number, s.type, s.secret_value)
        for s in scan_file(str(path))
        if s.secret_value and s.line_number
    )
    assert sorted(_scan_whole_file(str(path))) == expected


def test_a_value_that_is_also_a_name_is_redacted_in_the_string_and_the_code_still_parses() -> None:
    import ast

    source = 'app.secret_Tk9xQ2mL7vR4wZ8n = "secret_Tk9xQ2mL7vR4wZ8n"  # secret_Tk9xQ2mL7vR4wZ8n\n'
    result = redact("app.py", source)
    assert result.text == f'app.secret_Tk9xQ2mL7vR4wZ8n = "{MARK}"  # {MARK}\n'
    ast.parse(result.text)


def test_a_name_like_credential_in_a_docstring_or_broken_code_is_still_redacted() -> None:
    token = "ghp_R8vKq2LmZt5Yx9Wn3Hb7Jc1Pd4Fs6Ga0Eu2Q"
    docstring = f'def f():\n    """Call it with\n    GITHUB_TOKEN = {token}\n    """\n'
    assert token not in redact("doc.py", docstring).text
    broken = f"GITHUB_TOKEN = {token} (\n"
    assert token not in redact("broken.py", broken).text


def test_ordinary_code_is_left_alone() -> None:
    source = "def add(first_number, second_number):\n    return first_number + second_number\n"
    assert redact("m.py", source).text == source


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab=:!()[] _.-x1\t\\v", max_size=80))
def test_the_linear_indirect_reference_filter_answers_as_detect_secrets_does(line: str) -> None:
    from detect_secrets.filters.heuristic import is_indirect_reference as reference

    assert is_indirect_reference(line) == reference(line)


def test_a_value_found_once_is_redacted_wherever_it_appears_even_before_punctuation() -> None:
    from kbc.analyzers.secrets import present

    key = "Zq8vR2mL7xK4pW9n"
    text = f'api_key = "{key}"\nsee {key}.\n({key}) and Tr0ub&d0r!x\n'
    redacted = redact("settings.py", text, "python", also=["Tr0ub&d0r!x"]).text
    assert key not in redacted and "Tr0ub&d0r!x" not in redacted
    assert redacted.count("[REDACTED]") == 4
    assert present(f"the key is {key}. done", {key, "other-Value-123", "a&b=c"}) == {key}


def test_facts_come_from_the_file_as_written_and_carry_no_credential() -> None:
    import json

    from kbc.analyzers.python.analyze import analyze_source
    from kbc.domain.codec import to_data
    from kbc.domain.models import AnalysisOk, AnalysisTask

    # Redacting the key's lines takes the closing quotes with them: the redacted text no longer
    # parses, the file does.
    source = PEM.replace('KEY = """', 'KEY = """  # the signing key').replace('\n"""\n', '"""\n') + (
        '\n\ndef sign(payload):\n    """Sign with ghp_R8vKq2LmZt5Yx9Wn3Hb7Jc1Pd4Fs6Ga0Eu2Q."""\n'
        "    return payload\n"
    )
    assert "MARK" not in source
    result = analyze_source(source.encode(), AnalysisTask("keys.py", "/nonexistent/keys.py", "keys", False))
    assert isinstance(result, AnalysisOk), result
    assert "sign" in {s.name for s in result.facts.symbols}
    dumped = json.dumps(to_data(result.facts))
    for secret in (
        "5+7nYV7zXzDkm0guFcrnUAcgHhJhew/tp+Fkd5b/AivqjtAqgqF1kw8jN803lMUi",
        "ghp_R8vKq2LmZt5Yx9Wn3Hb7Jc1Pd4Fs6Ga0Eu2Q",
    ):
        assert secret not in dumped
    assert MARK in dumped and result.facts.secrets
    planted = Path(__file__).resolve().parents[2] / "planted.py"
    task = AnalysisTask("tests/planted.py", str(planted), "planted", False)
    found = analyze_source(planted.read_bytes(), task)
    assert isinstance(found, AnalysisOk) and "planted" in {s.name for s in found.facts.symbols}


def test_a_test_fixture_s_password_is_no_credential_and_a_word_is_scrubbed_as_a_word() -> None:
    """A test fixture's password "test" (flask's tutorial conftest) is made up: nothing is taken
    out of its facts. A value taken out of facts is taken out where it stands as a word, not out
    of the fields that name things or out of longer words."""
    from dataclasses import dataclass

    from kbc.analyzers.python.analyze import analyze_source
    from kbc.analyzers.secrets import scrub
    from kbc.domain.models import AnalysisOk, AnalysisTask

    source = (
        '"""Fixtures for the tests: a logged-in test client."""\n\n\n'
        "class AuthActions:\n"
        '    def login(self, username="test", password="test"):\n'
        '        """Log in as the test user (see tests/test_auth.py)."""\n'
        '        return self._client.post("/auth/login", data={"username": username})\n\n\n'
        "def test_login(auth):\n    auth.login()\n"
    )
    task = AnalysisTask("tests/conftest.py", "/nonexistent/tests/conftest.py", "tests.conftest", False)
    result = analyze_source(source.encode(), task)
    assert isinstance(result, AnalysisOk), result
    login = next(s for s in result.facts.symbols if s.name == "login")
    assert not result.facts.secrets and '"test"' in login.signature

    @dataclass(frozen=True)
    class Facts:
        path: str
        doc: str

    scrubbed = scrub(
        Facts("tests/test_auth.py", "Log in as the test user (see tests/test_auth.py)."), ["test"]
    )
    assert scrubbed == Facts("tests/test_auth.py", f"Log in as the {MARK} user (see tests/test_auth.py).")


# Code whose long runs are snake_case names, with a credential of each kind detect-secrets fires
# on in code beside them (a keyword, tokens whose random part is lowercase, a quoted string of
# lowercase letters random enough for the base64 detector, a short quoted hex string).
SNAKE_CODE = "\n".join(
    [
        "def is_strongly_connected_component(graph_of_nodes):",
        "    return all_pairs_shortest_path_length(graph_of_nodes)",
        'database_password = "hunter2-correct-horse"',
        'stripe_client = "sk_live_qwertyuiopasdfghjklzxcvb"',
        'bot = "1122223333:aaaaaaaaaaaaaaaaaaassssssdddddddddd"',
        'fingerprint = "abc123def456"',
        'opaque_value = "qjxvkzmwbfhpgdlrtcysnueoia_qmzkxj"',
        "maximum_weighted_matching_of_the_graph = weighted_matching",
        'github_client = "ghp_abcdefghijklmnopqrstuvwxyzabcdefghij"',
    ]
)


def test_code_screened_finds_what_detect_secrets_finds_reading_every_line(tmp_path: Path) -> None:
    from kbc.analyzers.secret_scan import _code_screen, _scan, raw_findings

    path = tmp_path / "settings_module.py"
    path.write_text(SNAKE_CODE)
    lines = SNAKE_CODE.splitlines()
    every_line = _scan(str(path), list(enumerate(lines, start=1)))
    assert len({number for number, _, _ in every_line}) == 6
    found = {(n, kind, value) for n, kind, value in raw_findings(str(path), SNAKE_CODE, "python", lines)}
    assert set(every_line) <= found
    # the lines holding only names are not handed to the detectors
    assert [n for n, line in enumerate(lines, start=1) if not _code_screen(line)] == [1, 2, 8]


# Credential words with a value beside them, and without one: the detectors fire on the first
# kind only, so only those lines are handed over.
KEYWORD_CODE = "\n".join(
    [
        "    keys.append(key)",  # a word, no value: not handed over
        "    yield key, value",
        "# the private helpers keep the token cache warm",
        'db_password = "Zq8kLm2vT9wXr4Qp"',
        "config = {'api_key': 'Hj3kL9mN2pQ5rS8t'}",
        'if "Hx7Lp2Qm9Rt4Vw8Z" == secret:',
        "-----BEGIN RSA PRIVATE KEY-----",
        "AccountKey=" + "A1b2C3d4E5f6G7h8" * 5 + "A1b2C3d4",
    ]
)


def test_a_credential_word_is_handed_over_only_with_a_value_beside_it(tmp_path: Path) -> None:
    from kbc.analyzers.secret_scan import _code_screen, _scan

    path = tmp_path / "config_module.py"
    path.write_text(KEYWORD_CODE)
    lines = KEYWORD_CODE.splitlines()
    handed = [(n, line) for n, line in enumerate(lines, start=1) if _code_screen(line)]
    assert [n for n, _ in handed] == [4, 5, 6, 7, 8]
    assert sorted(_scan(str(path), handed)) == sorted(_scan(str(path), list(enumerate(lines, start=1))))
    assert {n for n, _, _ in _scan(str(path), handed)} >= {4, 5, 6}
