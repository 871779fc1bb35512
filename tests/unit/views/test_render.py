"""Where a view's Markdown is written: a file name per view id, safe and recognisable."""

from __future__ import annotations

from kbc.views.render import view_file


def test_a_view_file_keeps_the_ids_own_underscores_and_drops_brackets_at_the_ends() -> None:
    assert view_file("workflow:pkg.Prompt.__call__") == "workflow/pkg.Prompt.__call__.md"
    assert view_file("module:click[_compat]") == "module/click__compat.md"
    assert view_file("module:click[core]") == "module/click_core.md"
    assert view_file("architecture") == "architecture.md"


def test_a_view_file_never_leaves_its_folder_nor_hides() -> None:
    for hostile in ("module:../../etc/passwd", "module:.hidden", "workflow:a b/c", "module:[]"):
        name = view_file(hostile)
        folder, _, file = name.partition("/")
        assert folder in ("module", "workflow") and "/" not in file and not file.startswith(".")
