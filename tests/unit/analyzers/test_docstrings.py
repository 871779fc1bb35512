"""The summary a view quotes from a docstring: prose only, markup off, sentences whole."""

import pytest

from kbc.analyzers.docstrings import summary

REQUESTS = """
Requests HTTP Library
~~~~~~~~~~~~~~~~~~~~~

Requests is an HTTP library, written in Python, for human beings.
Basic GET usage:

   >>> import requests
   >>> r = requests.get('https://www.python.org')
   >>> r.status_code
   200

:copyright: (c) 2017 by Kenneth Reitz.
:license: Apache 2.0, see LICENSE for more details.
"""


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (REQUESTS, "Requests is an HTTP library, written in Python, for human beings."),
        (
            "requests.utils\n~~~~~~~~~~~~~~\n\nThis module provides utility functions.\n",
            "This module provides utility functions.",
        ),
        ("=====\nTitle\n=====\n\nThe text under an overlined title.", "The text under an overlined title."),
        (
            "# Shop\n\nHow **orders** and *refunds* work, see [the guide](docs/guide.md).",
            "How orders and refunds work, see the guide.",
        ),
        (
            "Create an :class:`~flask.ctx.AppContext`. Use as a ``with`` block to push it, which sets "
            ":attr:`.SessionMixin.accessed`; see `the docs <https://x.invalid>`_ and :ref:`testing-cli`.",
            "Create an `flask.ctx.AppContext`. Use as a `with` block to push it, which sets "
            "`SessionMixin.accessed`; see the docs and `testing-cli`.",
        ),
        (".. note::\n    A note first.\n\nThe prose after the directive.", "The prose after the directive."),
        ("Parse the value.\n\nParameters\n----------\nvalue : str\n    The value.", "Parse the value."),
        (":param value: the value\n:returns: the result\n\nConvert a value.", "Convert a value."),
        (
            "Copyright (c) 2024 Example Corp. Licensed under the MIT License.\n\nThe tool reads files.",
            "The tool reads files.",
        ),
        ("#!/usr/bin/env python\nRun the command line.", "Run the command line."),
        ("Example::\n\n    run(x)\n\nRuns things.", "Runs things."),
        (
            "- first item\n- second item\n\nThe list above is not a summary.",
            "The list above is not a summary.",
        ),
        ("Only a Title", "Only a Title"),
        (":rtype: str", ""),
        ("", ""),
    ],
)
def test_a_summary_is_the_first_prose_paragraph_without_markup(doc: str, expected: str) -> None:
    assert summary(doc) == expected


def test_sentences_are_kept_whole_within_the_limit() -> None:
    doc = (
        "The first sentence is short. The second one is a little longer than the first. "
        "The third would pass the limit if it were kept whole here."
    )
    assert summary(doc, limit=90) == (
        "The first sentence is short. The second one is a little longer than the first."
    )
    long = "A first sentence that goes on and on " * 10
    cut = summary(long, limit=60)
    assert cut.endswith("…") and len(cut) <= 60 and not cut[:-1].endswith(" ")
    assert "a.b.c" in summary("Call a.b.c to start. Then wait.", limit=25)
