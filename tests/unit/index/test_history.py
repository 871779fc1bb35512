"""What git's history says of files: which change together, and what each recent commit
was about."""

from pathlib import Path

import pytest
from helpers import git, write_tree

from kbc.domain.models import GraphFacts
from kbc.index.history import changed_together, commit_messages, message_words
from kbc.retrieval import rank
from kbc.retrieval.rank import FileGraph


def commit(root: Path, files: dict[str, str], message: str) -> None:
    write_tree(root, files)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


def history(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit(root, {"core.py": "1", "helper.py": "1", "other.py": "1"}, "start")
    commit(root, {"core.py": "2", "helper.py": "2"}, "core and helper")
    commit(root, {"core.py": "3", "helper.py": "3", "other.py": "3"}, "three files")
    commit(root, {"core.py": "4"}, "core alone")
    commit(root, {f"bulk/f{n}.py": "1" for n in range(12)} | {"core.py": "5", "other.py": "5"}, "bulk")
    return root


def test_files_changed_by_the_same_commits_are_paired_by_their_share(tmp_path: Path) -> None:
    pairs = changed_together(history(tmp_path), max_files=10)
    # "start" and "three files" add 1/2 to each of their pairs, "core and helper" 1; a commit of
    # one file pairs nothing, and one of fourteen files is too broad to say anything.
    assert pairs == {
        ("core.py", "helper.py"): 2.0,
        ("core.py", "other.py"): 1.0,
        ("helper.py", "other.py"): 1.0,
    }


def test_only_the_history_up_to_head_is_read(tmp_path: Path) -> None:
    root = history(tmp_path)
    git(root, "checkout", "-q", "-b", "later")
    commit(root, {"other.py": "6", "helper.py": "6"}, "after the store's commit")
    git(root, "checkout", "-q", "main")
    assert changed_together(root)[("helper.py", "other.py")] == 1.0


def test_a_folder_without_git_has_no_history(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": "1", "b.py": "1"})
    assert changed_together(tmp_path) == {}


def test_files_changed_together_are_linked_in_the_file_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rank, "COCHANGE_WEIGHT", 1.0)
    facts = GraphFacts((), (), (), (), (), (), ())
    paths = {"core": "core.py", "helper": "helper.py", "other": "other.py", "lone": "lone.py"}
    pairs = changed_together(history(tmp_path))
    graph = FileGraph.from_facts(facts, paths, {}, pairs)
    lift = graph.personalised({"core.py": 1.0})
    # the seed's most frequent partner first; a file never changed with it gets nothing
    assert lift["helper.py"] > lift["other.py"] > 0
    assert "lone.py" not in lift
    assert FileGraph.from_facts(facts, paths, {}).personalised({"core.py": 1.0}) == {}
    monkeypatch.setattr(rank, "COCHANGE_WEIGHT", 0.0)  # switched off, history links nothing
    assert FileGraph.from_facts(facts, paths, {}, pairs).personalised({"core.py": 1.0}) == {}


# -- precedents: what each recent commit was about and changed ----------------------------


def test_commit_messages_keep_words_and_indexed_files_newest_first(tmp_path: Path) -> None:
    root = history(tmp_path)
    commit(
        root, {"core.py": "6", "notes.txt": "x"}, "Parse RetryPolicy timeouts\n\nThe body counts: 503 errors."
    )
    kept = {"core.py", "helper.py", "other.py"}
    found = commit_messages(root, kept)
    # camel case split, lower-cased, words of three characters or more; unindexed files dropped
    assert found[0] == (
        ["parse", "retry", "policy", "timeouts", "body", "counts", "503", "errors"],
        ["core.py"],
    )
    # the fourteen-file "bulk" commit stays (at most fifty files), with its indexed files only
    assert [paths for _, paths in found[1:]] == [
        ["core.py", "other.py"],
        ["core.py"],
        ["core.py", "helper.py", "other.py"],
        ["core.py", "helper.py"],
        ["core.py", "helper.py", "other.py"],
    ]
    # a commit of more than fifty files is no precedent
    commit(root, {f"many/f{n}.py": "1" for n in range(51)} | {"core.py": "7"}, "sweeping rename")
    assert commit_messages(root, kept)[0][0] == [
        "parse",
        "retry",
        "policy",
        "timeouts",
        "body",
        "counts",
        "503",
        "errors",
    ]
    assert len(commit_messages(root, kept, commits=2)) == 1  # the latest two: one too broad


def test_precedents_read_only_up_to_head_and_not_without_git(tmp_path: Path) -> None:
    root = history(tmp_path)
    git(root, "checkout", "-q", "-b", "later")
    commit(root, {"other.py": "6"}, "after the store's commit")
    git(root, "checkout", "-q", "main")
    assert all("after" not in words for words, _ in commit_messages(root, {"other.py", "core.py"}))
    plain = tmp_path / "plain"
    write_tree(plain, {"a.py": "1"})
    assert commit_messages(plain, {"a.py"}) == []


def test_message_words_are_bounded_and_common_words_dropped() -> None:
    assert message_words("Fix the HTTPServer and add a URL for it") == ["http", "server", "url"]
    assert message_words("x" * 31 + " zz " + "y" * 30) == ["y" * 30]
