"""The chunks of what a task names, where the facts do not hold it: options and settings."""

from pathlib import Path

from kbc.domain.models import Chunk
from kbc.index.lexical import LexicalIndex
from kbc.retrieval.matched import Matcher
from kbc.retrieval.query import read_query

DECLARED = (
    "def pytest_addoption(parser):\n"
    '    group.addoption("--collectonly", "--collect-only", action="store_true",\n'
    '                    help="only collect tests, do not run them.")\n'
)
OPTIONS = '(\n    "ignore-paths",\n    {"type": "regexp_paths_csv", "default": []},\n)\n'
HANDLED = "def expand_modules(files, ignore_list):\n    return [f for f in files if f not in ignore_list]\n"


def chunk(cid: str, path: str, text: str, role: str) -> Chunk:
    return Chunk(cid, path, 1, text.count("\n") + 1, "code", "python", text, role=role)  # type: ignore[arg-type]


def matcher(tmp_path: Path) -> Matcher:
    chunks = [
        chunk("declared", "src/main.py", DECLARED, "source"),
        chunk("options", "src/base_options.py", OPTIONS, "source"),
        chunk("handled", "src/expand.py", HANDLED, "source"),
    ]
    # tests and docs repeat an option far more often than the code that declares it
    chunks += [
        chunk(
            f"t{i}",
            f"testing/test_collect_{i}.py",
            "def test_it(pytester):\n" + '    pytester.runpytest("--collect-only")\n' * 6,
            "test",
        )
        for i in range(6)
    ]
    chunks.append(
        chunk("doc", "doc/usage.rst", "Use --collect-only to list tests. --collect-only\n" * 4, "doc")
    )
    index = LexicalIndex(tmp_path / "lexical.sqlite")
    index.replace_files([], chunks, [])
    index.commit()
    return Matcher([], index)


def test_an_option_is_found_where_the_code_declares_it_before_its_tests(tmp_path: Path) -> None:
    found = matcher(tmp_path).match("pytest `--collect-only` needs a one char shortcut", [])
    assert found.ids[0] == "declared"
    assert found.described[0]["mention"] == "--collect-only"


def test_a_kebab_case_setting_is_read_and_found_as_its_declared_string(tmp_path: Path) -> None:
    task = '`--recursive=y` ignores `ignore-paths`\n```ini\n[tool.pylint]\nignore-paths = ["^gen"]\n```\n'
    assert {(m.label, m.text) for m in read_query(task)} >= {
        ("option", "ignore-paths"),
        ("option", "--recursive"),
    }
    assert "options" in matcher(tmp_path).match(task, []).ids
    assert not [m for m in read_query("encoded as `utf-8` by default") if m.label == "option"]
