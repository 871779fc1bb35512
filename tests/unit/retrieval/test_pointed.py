"""Where the documents found for a task point: the files of the repository they name."""

from __future__ import annotations

import pytest

from kbc.domain.models import Chunk
from kbc.retrieval import rank
from kbc.retrieval.pointed import Files, named_files, pointed
from kbc.retrieval.rank import fuse

FILES = Files(
    [
        "README.md",
        "docs/architecture.md",
        "src/shop/__init__.py",
        "src/shop/payments/refunds.py",
        "src/shop/orders.py",
        "src/shop/utils.py",
        "tests/test_utils.py",
        "tools/utils.py",
    ]
)


def test_a_name_is_a_path_a_file_name_only_one_file_bears_or_a_module() -> None:
    assert FILES.resolve("src/shop/orders.py") == "src/shop/orders.py"
    assert FILES.resolve("./src/shop/orders.py") == "src/shop/orders.py"
    assert FILES.resolve("refunds.py") == "src/shop/payments/refunds.py"
    assert FILES.resolve("utils.py") is None  # two files bear it: which one is not said
    assert FILES.resolve("shop.payments.refunds") == "src/shop/payments/refunds.py"
    assert FILES.resolve("shop") is None and FILES.resolve("elsewhere.py") is None


def test_the_lines_sharing_most_words_with_the_task_are_read_first() -> None:
    text = "The orders live in `src/shop/orders.py`.\nA refund is checked by `refunds.py` within 30 days.\n"
    terms = frozenset({"refund", "days"})
    assert named_files(text, FILES, terms) == ["src/shop/payments/refunds.py", "src/shop/orders.py"]
    assert named_files(text, FILES, terms, limit=1) == ["src/shop/payments/refunds.py"]


def chunk(cid: str, path: str, kind: str, text: str = "x\n") -> Chunk:
    role = {"doc": "doc", "code": "source"}[kind]
    return Chunk(cid, path, 1, 5, kind, "markdown" if kind == "doc" else "python", text, role=role)  # type: ignore[arg-type]


def test_only_documents_among_the_best_hits_point(monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = {
        "doc": chunk("doc", "docs/architecture.md", "doc", "`refunds.py` checks a refund; see README.md\n"),
        "code": chunk("code", "src/shop/orders.py", "code", "# see refunds.py\n"),
        "refund": chunk("refund", "src/shop/payments/refunds.py", "code"),
    }
    lexical = [("code", 9.0), ("doc", 8.0), ("refund", 1.0)]
    assert pointed(lexical, chunks, FILES, "refund") == ["src/shop/payments/refunds.py", "README.md"]
    monkeypatch.setattr("kbc.retrieval.pointed.SEEDS", 1)
    assert pointed(lexical, chunks, FILES, "refund") == []  # the document is not among the best


def test_the_files_the_documents_name_rank_as_one_more_list(monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = {
        "echo": chunk("echo", "src/shop/orders.py", "code"),
        "refund": chunk("refund", "src/shop/payments/refunds.py", "code"),
    }
    lexical = [("echo", 9.0), ("refund", 8.5)]
    plain = fuse(lexical, [], [], chunks)
    monkeypatch.setattr(rank, "POINTED_WEIGHT", 1.0)
    named = fuse(lexical, [], [], chunks, pointed=["src/shop/payments/refunds.py"])
    assert max(plain, key=lambda c: plain[c]) == "echo"
    assert max(named, key=lambda c: named[c]) == "refund" and named["echo"] == plain["echo"]
    monkeypatch.setattr(rank, "POINTED_WEIGHT", 0.0)
    assert fuse(lexical, [], [], chunks, pointed=["src/shop/payments/refunds.py"]) == plain
