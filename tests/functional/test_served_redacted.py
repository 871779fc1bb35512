"""Files as MCP get_file, REST /files and the UI serve them, over a repository built by the CLI:
a module whose only look-alikes are placeholders is served whole, a module holding a
credential is served with it redacted (not refused), and a file that is a secret by nature
(.env) is refused."""

from __future__ import annotations

import json
import os
import random
import string
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from click.testing import CliRunner
from helpers import LEXICAL, repo_factory
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import TextContent
from web import running

from kbc.cli.main import cli
from kbc.domain.settings import load_settings
from kbc.services.knowledge import KnowledgeBase

# A library's module as boltons writes one: user:pass@example.com in a docstring, base64
# fixtures, a doctest's output. None of it is a credential.
URLUTILS = '''"""URL utilities: parsing, quoting and joining.

A URL's parts, as RFC 3986 names them::

    foo://user:pass@example.com:8042/over/there?name=ferret#nose
"""

import base64
import string

# What a quoted greeting looks like on the wire.
GREETING = base64.b64decode("SGVsbG8sIHdvcmxkISBUaGlzIGlzIGEgdGVzdCBvZiBxdW90aW5nLg==")


def soft_sorted(iterable, first=(), last=()):
    """``iterable`` sorted, with ``first`` at the front and ``last`` at the end.

    >>> ''.join(soft_sorted(string.hexdigits, first='za1', last='b'))
    'aA1023456789cCdDeEfFbB'
    """
    return sorted(iterable)
'''
_RNG = random.Random(20261207)  # made at run time, so no scanner takes this file for a leak
_ALNUM = string.ascii_letters + string.digits
STRIPE_KEY = "sk_live_" + "".join(_RNG.choice(_ALNUM) for _ in range(24))
DB_PASSWORD = "".join(_RNG.choice(_ALNUM) for _ in range(20))
SETTINGS = (
    '"""Deployment settings."""\n\n'
    f'STRIPE_API_KEY = "{STRIPE_KEY}"\n'
    f'DATABASE_URL = "postgres://app:{DB_PASSWORD}@db.internal:5432/app"\n'
    "DEBUG = False\n"
)
FILES = {
    "lib/__init__.py": '"""A small utilities library."""\n',
    "lib/urlutils.py": URLUTILS,
    "app/__init__.py": '"""The app."""\n',
    "app/settings.py": SETTINGS,
    ".env": "DEBUG=1\nLOG_LEVEL=info\n",
    "config/prod.env": f"SECRET_KEY={DB_PASSWORD}\n",
}
SERVE_STDIO = (
    "import sys\nfrom kbc.services.components import Components\n"
    "from kbc.services.knowledge import KnowledgeBase\nfrom kbc.serve.run import serve\n"
    "serve(KnowledgeBase(sys.argv[1], components=Components.lexical()), 'stdio')\n"
)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The repository built by `kbc build`, lexical, with only this test's configuration."""
    with pytest.MonkeyPatch.context() as mp:
        for key in [k for k in os.environ if k.startswith("KBC_")]:
            mp.delenv(key)
        mp.setenv("KBC_CONFIG", "")
        root = repo_factory(tmp_path_factory.mktemp("served"))(FILES)
        result = CliRunner().invoke(cli, [*LEXICAL, "build", str(root), "--workers", "1"])
        assert result.exit_code == 0, result.output
        yield root


def mcp_get_file(root: Path, paths: list[str]) -> dict[str, Any]:
    """What MCP get_file answers for each path over stdio: the lines, or the error's text."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KBC_")}
    params = StdioServerParameters(
        command=sys.executable, args=["-c", SERVE_STDIO, str(root)], env={**env, "KBC_CONFIG": ""}
    )
    answers: dict[str, Any] = {}

    async def main() -> None:
        with (root.parent / "mcp.log").open("w") as log:
            async with (
                stdio_client(params, errlog=log) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                for path in paths:
                    result = await session.call_tool("get_file", {"path": path})
                    content = result.content[0]
                    assert isinstance(content, TextContent)
                    answers[path] = content.text if result.is_error else json.loads(content.text)

    anyio.run(main)
    return answers


@pytest.fixture(scope="module")
def served(built: Path) -> Iterator[dict[str, dict[str, Any]]]:
    """path -> interface -> what it served: MCP get_file, REST /api/v1/files, the UI's /source."""
    paths = ["lib/urlutils.py", "app/settings.py", ".env", "config/prod.env"]
    out: dict[str, dict[str, Any]] = {path: {} for path in paths}
    for path, answer in mcp_get_file(built, paths).items():
        out[path]["mcp"] = answer
    kb = KnowledgeBase(built, settings=load_settings(built, assignments=[LEXICAL[1]]))
    with running(kb) as url:
        for path in paths:
            out[path]["rest"] = httpx.get(f"{url}/api/v1/files/{path}", timeout=60)
            out[path]["ui"] = httpx.get(f"{url}/source/{path}", timeout=60)
    yield out


def test_a_module_of_placeholders_examples_and_fixtures_is_served_whole(
    served: dict[str, dict[str, Any]],
) -> None:
    answers = served["lib/urlutils.py"]
    assert answers["mcp"]["text"] == URLUTILS
    assert answers["rest"].status_code == 200 and answers["rest"].json()["text"] == URLUTILS
    ui = answers["ui"]
    assert ui.status_code == 200 and "[REDACTED]" not in ui.text
    assert "user:pass@example.com" in ui.text and "aA1023456789cCdDeEfFbB" in ui.text


def test_a_module_holding_a_credential_is_served_with_it_redacted_not_refused(
    served: dict[str, dict[str, Any]],
) -> None:
    expected = SETTINGS.replace(STRIPE_KEY, "[REDACTED]").replace(DB_PASSWORD, "[REDACTED]")
    answers = served["app/settings.py"]
    assert answers["mcp"]["text"] == expected and answers["mcp"]["lines"] == 5
    assert answers["rest"].status_code == 200 and answers["rest"].json()["text"] == expected
    ui = answers["ui"]
    assert ui.status_code == 200 and "DATABASE_URL" in ui.text and "[REDACTED]" in ui.text
    for answer in (json.dumps(answers["mcp"]), answers["rest"].text, ui.text):
        assert STRIPE_KEY not in answer and DB_PASSWORD not in answer


@pytest.mark.parametrize("path", [".env", "config/prod.env"])
def test_an_environment_file_is_refused_whatever_it_holds(
    served: dict[str, dict[str, Any]], path: str
) -> None:
    answers = served[path]
    refusal = "an environment file holds secrets by nature, so it is not served"
    assert isinstance(answers["mcp"], str) and refusal in answers["mcp"]
    assert answers["rest"].status_code == 403 and refusal in answers["rest"].json()["error"]
    assert refusal in answers["ui"].text
    for answer in (answers["mcp"], answers["rest"].text, answers["ui"].text):
        assert "LOG_LEVEL" not in answer and DB_PASSWORD not in answer
