"""Text as kbc shows it: a file with CRLF line endings, a bell and a terminal escape reaches
slices, search and get_file with LF endings, no control character, and every line's number."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from helpers import LEXICAL
from web import built_repository, running

from kbc.cli.main import cli
from kbc.index.chunks import readable
from kbc.services.components import Components
from kbc.services.knowledge import KnowledgeBase

FILES: dict[str, str | bytes] = {
    "ledger/__init__.py": '"""Ledger."""\n',
    "ledger/alarms.py": (
        b'"""Alarms rung when a ledger balance goes negative."""\r\n'
        b"\r\n"
        b"\r\n"
        b"def ring_alarm(balance):\r\n"
        b'    """Ring the overdraft alarm\x07 in red \x1b[31mnow\x1b[0m."""\r\n'
        b"    return balance < 0\r\n"
    ),
}
TASK = "where does the ledger ring the overdraft alarm for a negative balance"
CONTROLS = {chr(c) for c in [*range(0, 9), *range(11, 32), 127]}


def test_readable_keeps_lines_and_shows_no_control_character() -> None:
    shown = readable("a\r\nb\rc\x07d\x1b[0m\te\f\n")
    assert shown == "a\nb c\ufffdd\ufffd[0m\te \n"
    assert shown.count("\n") == 2


@pytest.mark.slow
def test_slices_search_and_files_show_text_without_control_characters(tmp_path: Path) -> None:
    with built_repository(tmp_path, FILES) as root:
        found = json.loads(
            CliRunner()
            .invoke(cli, [*LEXICAL, "retrieve", "--repo", str(root), "--format", "json", TASK])
            .output
        )
        text = found["text"]
        assert "def ring_alarm(balance):" in text and "Ring the overdraft alarm" in text
        assert not CONTROLS & set(text), sorted(CONTROLS & set(text))
        (item,) = [i for i in found["items"] if i["path"] == "ledger/alarms.py"]
        assert (item["start_line"], item["end_line"]) == (1, 6)
        hits = CliRunner().invoke(cli, [*LEXICAL, "search", "--repo", str(root), "--format", "json", TASK])
        assert not CONTROLS & set(hits.output)
        with running(KnowledgeBase(root, components=Components.lexical())) as url:
            lines = httpx.get(f"{url}/api/v1/files/ledger/alarms.py", params={"start": 4, "end": 5}).json()
        assert (
            lines["text"] == "def ring_alarm(balance):\n"
            '    """Ring the overdraft alarm\ufffd in red \ufffd[31mnow\ufffd[0m."""\n'
        )
