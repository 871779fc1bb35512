"""A changelog names what it says was removed or replaced."""

from __future__ import annotations

import textwrap

from kbc.analyzers.mentions import is_changelog, taken_away


def test_changelogs_are_known_by_their_names() -> None:
    for path in (
        "CHANGELOG.md",
        "CHANGES.rst",
        "HISTORY.md",
        "NEWS",
        "docs/changelog.md",
        "changelog.d/12.md",
    ):
        assert is_changelog(path), path
    for path in ("README.md", "docs/changing-orders.md", "docs/history_of_kit.md"):
        assert not is_changelog(path), path


def test_an_entry_about_removing_or_replacing_names_what_is_gone() -> None:
    body = textwrap.dedent(
        """\
        ## 2.0

        - Replace deprecated `utcnow()`
        - Added `kit.slugify()`
        - `kit.old_parse()` is no longer
          available: use `kit.parse()`
        * Renamed `Cache.drop` to `Cache.evict`

        The `kit.Session` class was dropped.
        """
    )
    assert taken_away(body) == {
        "utcnow()",
        "kit.old_parse()",
        "kit.parse()",
        "Cache.drop",
        "Cache.evict",
        "kit.Session",
    }
