"""discover: tracked text files, with every skipped path counted and explained."""

import os
from pathlib import Path

from helpers import RepoFactory, git

from kbc.analyzers.discover import discover, git_blob_id


def reasons(root: Path, **kwargs: object) -> dict[str, str]:
    inventory = discover(root, max_file_bytes=kwargs.pop("max_file_bytes", 10_000), **kwargs)  # type: ignore[arg-type]
    return {s.path: s.reason for s in inventory.skipped}


def test_only_tracked_files_are_listed_in_a_git_work_tree(make_repo: RepoFactory) -> None:
    root = make_repo({"a.py": "x = 1\n", ".gitignore": "build/\n"})
    (root / "untracked.py").write_text("y = 2\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("z = 3\n")
    inventory = discover(root, max_file_bytes=10_000)
    assert [f.path for f in inventory.files] == [".gitignore", "a.py"]
    assert inventory.vcs == "git" and len(inventory.commit) == 40
    assert inventory.ignored == 1


def test_a_folder_its_repository_ignores_is_read_as_a_plain_directory(make_repo: RepoFactory) -> None:
    # an unpacked source archive inside a repository's ignored folder: git lists none of it
    root = make_repo({"a.py": "x = 1\n", ".gitignore": "vendor/\n"})
    unpacked = root / "vendor" / "pkg-1.0"
    (unpacked / "pkg").mkdir(parents=True)
    (unpacked / "pkg" / "core.py").write_text("def run():\n    return 1\n")
    inventory = discover(unpacked, max_file_bytes=10_000)
    assert [f.path for f in inventory.files] == ["pkg/core.py"]
    assert inventory.vcs != "git"
    # the repository itself, and a folder of it that is not ignored, stay git work trees
    assert discover(root, max_file_bytes=10_000).vcs == "git"
    (root / "src").mkdir()
    assert discover(root / "src", max_file_bytes=10_000).vcs == "git"


def test_blob_id_matches_git(make_repo: RepoFactory) -> None:
    root = make_repo({"a.py": "print('hi')\n"})
    (source,) = discover(root, max_file_bytes=10_000).files
    assert source.blob == git(root, "rev-parse", "HEAD:a.py").strip()
    assert source.blob == git_blob_id(b"print('hi')\n")
    assert (source.language, source.lines) == ("python", 1)


def test_binary_oversized_and_excluded_files_are_skipped(make_repo: RepoFactory) -> None:
    root = make_repo(
        {
            "fake.py": b"\x89PNG\r\n\x1a\n\x00\x00binary",
            "big.txt": "x" * 20_000,
            "vendor/lib.py": "pass\n",
            "ok.py": "pass\n",
        }
    )
    assert reasons(root, exclude=["vendor/"]) == {
        "fake.py": "binary",
        "big.txt": "oversized",
        "vendor/lib.py": "excluded",
    }


def test_symlinks_are_skipped_with_where_they_point(make_repo: RepoFactory, tmp_path: Path) -> None:
    outside = tmp_path / "secret.py"
    outside.write_text("token = 1\n")
    root = make_repo({"real.py": "pass\n"})
    os.symlink(outside, root / "escape.py")
    os.symlink("real.py", root / "alias.py")
    os.symlink("loop_b", root / "loop_a")
    os.symlink("loop_a", root / "loop_b")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "links")
    assert reasons(root) == {
        "escape.py": "symlink-outside",
        "alias.py": "symlink",
        "loop_a": "broken-symlink",
        "loop_b": "broken-symlink",
    }


def test_plain_directory_honours_gitignore_and_tool_folders(make_repo: RepoFactory) -> None:
    root = make_repo(
        {
            ".gitignore": "*.log\ngenerated/\n",
            "app.py": "pass\n",
            "run.log": "noise\n",
            "generated/x.py": "pass\n",
            "node_modules/m.js": "x\n",
            "pkg/__pycache__/a.pyc": b"\x00",
        },
        use_git=False,
    )
    inventory = discover(root, max_file_bytes=10_000)
    assert [f.path for f in inventory.files] == [".gitignore", "app.py"]
    assert inventory.vcs == "none"
    assert inventory.ignored == 4


def test_python_script_without_suffix_is_python(make_repo: RepoFactory) -> None:
    root = make_repo({"bin/tool": "#!/usr/bin/env python3\nprint(1)\n"})
    (source,) = discover(root, max_file_bytes=10_000).files
    assert source.language == "python"


def test_store_folder_inside_the_repository_is_left_out(make_repo: RepoFactory) -> None:
    root = make_repo({"a.py": "", "kbcstore/x.json": "{}"})
    inventory = discover(root, max_file_bytes=10_000, store_dir=root / "kbcstore")
    assert [f.path for f in inventory.files] == ["a.py"]
    assert inventory.skipped[0].reason == "excluded"


def test_reading_a_repository_leaves_no_git_process_behind(make_repo: RepoFactory) -> None:
    root = make_repo({"a.py": "x = 1\n"})
    me = os.getpid()
    children = Path(f"/proc/{me}/task/{me}/children")
    before = set(children.read_text().split()) if children.exists() else set()
    discover(root, max_file_bytes=10_000)
    if children.exists():  # Linux; elsewhere the suite's ResourceWarning check still catches a leak
        assert set(children.read_text().split()) <= before


def test_a_name_that_is_not_utf8_is_skipped_and_the_rest_kept(make_repo: RepoFactory) -> None:
    root = make_repo({"pkg/__init__.py": "", "pkg/ok.py": "pass\n"}, use_git=False)
    (root / os.fsdecode(b"pkg/caf\xe9.py")).write_bytes(b"def f():\n    return 1\n")  # latin-1
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "a latin-1 name")
    inventory = discover(root, max_file_bytes=10_000)
    assert [f.path for f in inventory.files] == ["pkg/__init__.py", "pkg/ok.py"]
    assert [(s.path, s.reason) for s in inventory.skipped] == [("pkg/caf\\xe9.py", "bad-name")]


def test_a_tracked_folder_swapped_for_a_link_out_is_not_read(make_repo: RepoFactory, tmp_path: Path) -> None:
    root = make_repo({"pkg/__init__.py": "", "pkg/core.py": "def f():\n    return 1\n", "ok.py": "pass\n"})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "__init__.py").write_text("SECRET = 'outside the repository'\n")
    (elsewhere / "core.py").write_text("SECRET = 'outside the repository'\n")
    for name in ("__init__.py", "core.py"):
        (root / "pkg" / name).unlink()
    (root / "pkg").rmdir()
    (root / "pkg").symlink_to(elsewhere, target_is_directory=True)  # no commit: git still lists pkg/*
    inventory = discover(root, max_file_bytes=10_000)
    assert [f.path for f in inventory.files] == ["ok.py"]
    assert {s.path: s.reason for s in inventory.skipped} == {
        "pkg/__init__.py": "symlink-outside",
        "pkg/core.py": "symlink-outside",
    }


def test_a_header_is_cpp_when_its_opening_shows_cpp() -> None:
    from kbc.analyzers.discover import language_of

    assert language_of("lib/buf.h", b"#ifndef BUF_H\n#include <stdio.h>\nint buf_push(void);\n") == "c"
    assert language_of("lib/shape.h", b"#pragma once\n#include <vector>\nnamespace geo {\n") == "cpp"
    assert language_of("lib/list.h", b"// a list\ntemplate <typename T>\nclass List {\n") == "cpp"
    assert language_of("web/app.tsx", b"") == "tsx" and language_of("src/x.hpp", b"") == "cpp"


def test_an_objective_c_header_is_neither_c_nor_cpp_and_cpp_shows_past_a_long_licence(tmp_path: Path) -> None:
    from kbc.analyzers.discover import LANGUAGE_HEAD, language_of

    assert language_of("ios/RCTView.h", b"#import <UIKit/UIKit.h>\n@interface RCTView : UIView\n@end\n") == (
        "objective-c"
    )
    assert language_of("ios/Proto.h", b"// x\n@protocol RCTBridgeModule <NSObject>\n@end\n") == "objective-c"
    licence = b"// Copyright and licence, at length.\n" * 200  # some 7 KB before the code
    header = licence + b"#pragma once\nusing std::get;\nnamespace testing {\n}\n"
    assert len(licence) > 4096 and len(header) < LANGUAGE_HEAD
    (tmp_path / "gtest-port.h").write_bytes(header)
    inventory = discover(tmp_path, max_file_bytes=100_000)
    assert [(f.path, f.language) for f in inventory.files] == [("gtest-port.h", "cpp")]
