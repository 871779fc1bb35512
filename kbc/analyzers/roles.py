"""What a file is to a developer: the code to change, or its tests, docs, config,
examples, or third-party code vendored into the repository."""

from __future__ import annotations

import posixpath

DOC_LANGUAGES = frozenset({"markdown", "rst", "text"})
_TEST_PARTS = frozenset({"test", "tests", "testing"})
_VENDOR_PARTS = frozenset({"vendor", "vendored", "_vendor", "third_party", "thirdparty", "extern",
                           "externals"})
_EXAMPLE_TOPS = frozenset({"examples", "example", "demo", "demos", "samples", "doc", "docs"})
CONFIG_LANGUAGES = frozenset({"toml", "yaml", "ini", "json"})


def is_test_path(path: str) -> bool:
    parts = path.split("/")
    name = posixpath.splitext(parts[-1])[0]
    return (bool(_TEST_PARTS & set(parts[:-1])) or name.startswith("test_")
            or name.endswith("_test") or name == "conftest")


def role_of(path: str, language: str) -> str:
    """What a file is to a developer: the code to change, or its tests, docs, config,
    examples, or third-party code vendored into the repository."""
    parts = path.split("/")
    directories = parts[:-1]
    if _VENDOR_PARTS & set(directories) or "packages" in directories[1:]:
        return "vendored"
    if is_test_path(path):
        return "test"
    if language in DOC_LANGUAGES:
        return "doc"
    if language in CONFIG_LANGUAGES or (directories and directories[0] == ".github"):
        return "config"
    if directories and directories[0] in _EXAMPLE_TOPS:
        return "example"
    return "source"
