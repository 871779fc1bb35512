"""The module path a ``go.mod`` declares, and the folder an import path names by it."""

from __future__ import annotations

import pytest

from kbc.analyzers.code.gomod import module_path, package_folder


@pytest.mark.parametrize(
    ("written", "declared"),
    [
        ("module github.com/x/y\n\ngo 1.21\n", "github.com/x/y"),
        ("// a comment\nmodule   example.com/m/v2 // major version two\n", "example.com/m/v2"),
        ('module "github.com/x/quoted"\n', "github.com/x/quoted"),
        ("go 1.21\nrequire github.com/a/b v1.0.0\n", ""),
        ("", ""),
    ],
)
def test_the_module_path_of_a_go_mod(written: str, declared: str) -> None:
    assert module_path(written) == declared


def test_an_import_path_names_the_folder_of_the_module_with_the_longest_path() -> None:
    modules = {"": "github.com/x/y", "tools": "github.com/x/y/tools", "api": "example.com/api"}
    assert package_folder("github.com/x/y/pkg/z", modules) == "pkg/z"
    assert package_folder("github.com/x/y", modules) == ""
    assert package_folder("github.com/x/y/tools/gen", modules) == "tools/gen"
    assert package_folder("example.com/api", modules) == "api"
    assert package_folder("github.com/x/yz/pkg", modules) is None  # a prefix of the name, not of the path
    assert package_folder("fmt", modules) is None
