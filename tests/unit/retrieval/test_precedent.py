"""Precedents: the files past commits like the task changed."""

import pytest

from kbc.retrieval import precedent
from kbc.retrieval.precedent import Precedents

COMMITS = [
    (["retry", "timeout", "connection", "pool"], ["net/pool.py", "net/retry.py"]),
    (["retry", "backoff", "jitter"], ["net/retry.py"]),
    (["docs", "readme", "install"], ["README.md"]),
    (["template", "render", "filter"], ["web/template.py"]),
    (["template", "escape", "html"], ["web/template.py", "web/escape.py"]),
    (["cache", "expire", "timeout"], ["cache.py"]),
]


def test_the_files_of_the_most_similar_commits_are_credited_most() -> None:
    credit = Precedents(COMMITS).credit("Retries ignore the backoff: jitter is applied twice")
    # "backoff" and "jitter" are rare words, shared with one commit alone
    assert max(credit, key=lambda p: credit[p]) == "net/retry.py"
    assert "web/template.py" not in credit and "README.md" not in credit


def test_a_file_changed_with_many_others_gets_a_smaller_share() -> None:
    commits = [
        (["alpha", "beta"], ["a.py"]),
        (["alpha", "beta"], ["b.py", "c.py", "d.py", "e.py"]),
        (["gamma"], ["f.py"]),
        (["delta"], ["g.py"]),
        (["epsilon"], ["h.py"]),
    ]
    credit = Precedents(commits).credit("alpha beta")
    assert credit["a.py"] == pytest.approx(2 * credit["b.py"])


def test_no_word_in_common_credits_nothing() -> None:
    assert Precedents(COMMITS).credit("unrelated words entirely") == {}
    assert Precedents([]).credit("retry timeout") == {}


def test_only_the_nearest_commits_credit_their_files(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(precedent, "NEAREST", 1)
    credit = Precedents(COMMITS).credit("template filter")
    assert set(credit) == {"web/template.py"}  # the escape commit is the second nearest


def test_a_word_in_most_commits_says_nothing() -> None:
    commits = [(["common", f"w{n}"], [f"f{n}.py"]) for n in range(10)]
    assert Precedents(commits).credit("common") == {}
