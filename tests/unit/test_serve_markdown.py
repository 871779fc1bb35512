"""Markdown as the UI renders it: a location whose path holds underscores or asterisks stays
a location (linked when served), in prose; code spans and fenced code are left as written."""

from __future__ import annotations

from kbc.serve.markdown import to_html

SERVED = {"store/payments/__init__.py", "a__b__.py", "pkg/__init__.py"}


def test_a_location_with_underscores_is_a_link_not_bold_text() -> None:
    shown = to_html("Refunds start in store/payments/__init__.py:1-1 (see *this*).", SERVED)
    assert "<strong>" not in shown and "<em>this</em>" in shown
    assert '<a class="loc" href="/source/store/payments/__init__.py?start=1&amp;end=1#L1">' in shown
    assert ">store/payments/__init__.py:1-1</a>" in shown


def test_code_keeps_its_underscores_and_is_still_linked() -> None:
    shown = to_html("`a__b__.py:2`\n\n```\nx = pkg/__init__.py:3  # __all__\n```\n", SERVED)
    assert "\\_" not in shown and "__all__" in shown
    assert ">a__b__.py:2</a></code>" in shown and ">pkg/__init__.py:3</a>" in shown
