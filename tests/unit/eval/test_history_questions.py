"""History mining: the lines each commit changed, as its parent numbers them, from a real git diff."""

from pathlib import Path

from helpers import RepoFactory, git, write_tree

from kbc.eval.history import MinedCommit, changed_lines, mine_commits, parse_hunks

TEN = "".join(f"line {n}\n" for n in range(1, 11))  # lines 1..10, each naming its number


def edit(
    text: str,
    replace: dict[int, str] | None = None,
    delete: range = range(0),
    after: dict[int, str] | None = None,
) -> str:
    """``text`` with lines replaced, deleted, and new lines inserted after a line (0: at the top)."""
    replace, after = replace or {}, after or {}
    lines = [""] + text.splitlines(keepends=True)
    out = [after[0]] if 0 in after else []
    for number, line in enumerate(lines[1:], start=1):
        if number not in delete:
            out.append(replace.get(number, line))
        if number in after:
            out.append(after[number])
    return "".join(out)


def commit(root: Path, message: str, files: dict[str, str | bytes]) -> None:
    write_tree(root, files)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


def only_commit(root: Path) -> MinedCommit:
    (mined,) = mine_commits(root, 1).commits
    return mined


def test_a_modification_a_deletion_and_an_insertion_are_three_ranges_of_the_old_lines(
    make_repo: RepoFactory,
) -> None:
    root = make_repo({"pkg/mod.py": TEN})
    changed = edit(TEN, replace={3: "LINE 3\n"}, delete=range(6, 8), after={9: "new\n"})
    commit(root, "Change the module", {"pkg/mod.py": changed})
    mined = only_commit(root)
    assert mined.answer == ("pkg/mod.py",)
    assert mined.hunks == (("pkg/mod.py", ((3, 3), (6, 7), (9, 9))),)
    assert mined.lines() == {"pkg/mod.py": ((3, 3), (6, 7), (9, 9))}


def test_a_pure_insertion_counts_as_the_line_it_follows_and_line_one_at_the_top(
    make_repo: RepoFactory,
) -> None:
    root = make_repo({"pkg/top.py": TEN, "pkg/middle.py": TEN})
    commit(
        root,
        "Add lines",
        {
            "pkg/top.py": edit(TEN, after={0: "first\nsecond\n"}),
            "pkg/middle.py": edit(TEN, after={4: "four and a half\n"}),
        },
    )
    assert only_commit(root).hunks == (("pkg/middle.py", ((4, 4),)), ("pkg/top.py", ((1, 1),)))


def test_a_replaced_block_runs_from_its_first_to_its_last_removed_line(make_repo: RepoFactory) -> None:
    # Line 3 of the parent looks like a file header once git prefixes it with "-".
    base = edit(TEN, replace={3: "-- not a header\n"})
    root = make_repo({"pkg/mod.py": base})
    commit(
        root,
        "Rewrite the middle",
        {"pkg/mod.py": edit(base, replace={n: f"new {n}\n" for n in (3, 4, 5)}, after={5: "extra\n"})},
    )
    assert only_commit(root).hunks == (("pkg/mod.py", ((3, 5),)),)


def test_a_rename_is_numbered_in_the_old_file_and_a_deleted_file_is_all_its_lines(
    make_repo: RepoFactory,
) -> None:
    old, same = TEN.replace("line", "old"), TEN.replace("line", "same")
    root = make_repo({"pkg/old.py": old, "pkg/gone.py": TEN, "pkg/same.py": same})
    (root / "pkg" / "old.py").rename(root / "pkg" / "new.py")
    (root / "pkg" / "gone.py").unlink()
    (root / "pkg" / "same.py").rename(root / "pkg" / "moved.py")
    commit(
        root,
        "Move the old module",
        {"pkg/new.py": edit(old, replace={5: "LINE 5\n"}), "pkg/added.py": "def added():\n    pass\n"},
    )
    mined = only_commit(root)
    assert mined.answer == ("pkg/gone.py", "pkg/old.py", "pkg/same.py")
    # A rename without edits changed no line; a new file is no answer.
    assert mined.hunks == (("pkg/gone.py", ((1, 10),)), ("pkg/old.py", ((5, 5),)))


def test_paths_git_quotes_in_its_headers_are_read_back(make_repo: RepoFactory) -> None:
    root = make_repo({"pkg/my module.py": TEN, "pkg/café.py": TEN, "pkg/[abc].py": TEN})
    commit(
        root,
        "Edit oddly named modules",
        {
            "pkg/my module.py": edit(TEN, replace={10: "ten\n"}),
            "pkg/café.py": edit(TEN, delete=range(1, 3)),
            "pkg/[abc].py": edit(TEN, replace={2: "two\n"}),
        },
    )
    sha = git(root, "rev-parse", "HEAD").strip()
    assert changed_lines(root, f"{sha}~1", sha, ["pkg/café.py", "pkg/my module.py", "pkg/[abc].py"]) == (
        ("pkg/[abc].py", ((2, 2),)),
        ("pkg/café.py", ((1, 2),)),
        ("pkg/my module.py", ((10, 10),)),
    )
    # Only the paths asked for, each read literally (``[abc]`` is no glob).
    assert changed_lines(root, f"{sha}~1", sha, ["pkg/[abc].py"]) == (("pkg/[abc].py", ((2, 2),)),)
    assert changed_lines(root, f"{sha}~1", sha, []) == ()


def test_parse_hunks_reads_headers_without_counts_and_skips_new_files() -> None:
    diff = (
        "diff --git a/a.py b/a.py\nindex 1..2 100644\n--- a/a.py\n+++ b/a.py\n"
        "@@ -7 +7 @@ def f():\n-old\n+new\n@@ -0,0 +1,2 @@\n+top\n+top\n"
        'diff --git "a/t\\tab.py" "b/t\\tab.py"\n--- "a/t\\tab.py"\n+++ "b/t\\tab.py"\n'
        "@@ -3,2 +2,0 @@\n-x\n-y\n"
        "diff --git a/n.py b/n.py\nnew file mode 100644\n--- /dev/null\n+++ b/n.py\n@@ -0,0 +1 @@\n+n\n"
    )
    assert parse_hunks(diff) == (("a.py", ((1, 1), (7, 7))), ("t\tab.py", ((3, 4),)))


def test_mining_for_issue_fixes_keeps_commits_that_close_an_issue_in_any_language(
    make_repo: RepoFactory,
) -> None:
    root = make_repo(
        {"src/parse.ts": TEN, "cmd/root.go": TEN, "src/de.rs": TEN, "src/main/java/a/B.java": TEN}
    )
    commit(root, "Trim the parser\n\nFixes #12", {"src/parse.ts": edit(TEN, replace={2: "two\n"})})
    commit(root, "Speed up the command (#40)", {"cmd/root.go": edit(TEN, replace={5: "five\n"})})
    commit(root, "Close owner/name#7: reject NaN", {"src/de.rs": edit(TEN, replace={7: "seven\n"})})
    commit(
        root,
        "Read records\n\nresolves: https://github.com/owner/name/issues/3",
        {"src/main/java/a/B.java": edit(TEN, replace={1: "one\n"}), "src/parse.test.ts": TEN},
    )
    commit(root, "Test the parser, fixes #13", {"src/parse.test.ts": TEN + "more\n"})
    mined = mine_commits(root, 10, referencing=True)
    assert [(c.answer, c.lines()) for c in mined.commits] == [
        (("src/main/java/a/B.java",), {"src/main/java/a/B.java": ((1, 1),)}),
        (("src/de.rs",), {"src/de.rs": ((7, 7),)}),
        (("src/parse.ts",), {"src/parse.ts": ((2, 2),)}),
    ]
    assert mined.reasons == {"no-issue": 1, "non-source": 1, "root": 1}
    assert len(mine_commits(root, 10).commits) == 4  # without the filter, the PR-numbered one too
