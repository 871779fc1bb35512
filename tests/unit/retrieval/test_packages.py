"""The folders of source code a task names, and the fusion's list of the files under them."""

from __future__ import annotations

import pytest

from kbc.domain.models import Chunk
from kbc.retrieval import rank
from kbc.retrieval.packages import Packages
from kbc.retrieval.rank import fuse

SOURCES = [
    "kbc/cli/main.py",
    "kbc/index/lexical.py",
    "kbc/index/tokens.py",
    "kbc/retrieval/pack.py",
    "kbc/retrieval/rank.py",
    "kbc/views/module.py",
    "kbc/http_client/session.py",
    "kbc/_private/hidden.py",
    "kbc/io/files.py",
]


def test_a_word_of_the_task_that_names_a_folder_names_it() -> None:
    packages = Packages(SOURCES)
    assert packages.named("how does retrieval stay within the token budget?") == ("kbc/retrieval/",)
    assert packages.named("the module view lists every class") == ("kbc/views/",)  # a plural's s
    assert packages.named("the HTTP client drops the session cookie") == ("kbc/http_client/",)  # every word
    assert packages.named("a client error") == ()  # half of a name names nothing
    assert packages.named("what does the lexical index hold") == ("kbc/index/",)


def test_a_folder_holding_most_of_the_code_or_with_a_short_or_private_name_names_nothing() -> None:
    packages = Packages(SOURCES)
    assert packages.named("kbc builds an index") == ("kbc/index/",)  # kbc/ holds every file
    assert packages.named("io of files") == ()  # two letters
    assert packages.named("the private hidden helper") == ()


def chunk(cid: str, path: str) -> Chunk:
    return Chunk(cid, path, 1, 5, "code", "python", cid, role="source")  # type: ignore[arg-type]


def test_the_files_under_a_named_folder_rank_as_one_more_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rank, "PACKAGE_WEIGHT", 1.0)
    chunks = {
        "echo": chunk("echo", "kbc/serve/mcp.py"),
        "packer": chunk("packer", "kbc/retrieval/pack.py"),
        "ranker": chunk("ranker", "kbc/retrieval/rank.py"),
    }
    lexical = [("echo", 9.0), ("packer", 7.0), ("ranker", 6.0)]
    plain = fuse(lexical, [], [], chunks)
    named = fuse(lexical, [], [], chunks, packages=("kbc/retrieval/",))
    assert max(plain, key=lambda c: plain[c]) == "echo"
    assert max(named, key=lambda c: named[c]) == "packer"  # the first of the folder's files
    assert named["packer"] > named["ranker"] > plain["ranker"] and named["echo"] == plain["echo"]
    monkeypatch.setattr(rank, "PACKAGE_WEIGHT", 0.0)
    assert fuse(lexical, [], [], chunks, packages=("kbc/retrieval/",)) == plain  # off: nothing changes
