"""The house's rooms stay small: no module of the package over 500 lines (a module that grows
past it is split by what it does, not trimmed of its comments)."""

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "kbc"
MOST_LINES = 500


def test_no_module_of_the_package_is_over_500_lines() -> None:
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 100  # the package itself, not an empty folder
    over = {
        str(m.relative_to(PACKAGE.parent)): n
        for m in modules
        if (n := len(m.read_text(encoding="utf-8").splitlines())) > MOST_LINES
    }
    assert not over, f"split these by what they do: {over}"
