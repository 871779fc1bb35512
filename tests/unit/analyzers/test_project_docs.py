"""What a project's README and docs say about it."""

from __future__ import annotations

import textwrap

from kbc.analyzers.project_docs import is_readme, project_docs, readme_summary


def test_a_readme_summary_skips_titles_badges_and_taglines_and_keeps_the_list_it_leads_into() -> None:
    text = textwrap.dedent(
        """\
        # Boltons

        *boltons should be builtins.*

        <a href="https://docs"><img src="https://badge.svg"></a>
        [![pypi](https://img/pypi.svg)](https://pypi)

        **Boltons** is a set of pure-Python utilities in the same spirit as
        [the standard library][stdlib], including:

          * [Atomic file saving][atomic], bolted on with [fileutils][fileutils]
          * A highly-optimized [OrderedMultiDict][omd], in [dictutils][dictutils]

        [stdlib]: https://docs.python.org/3/library/index.html
        """
    )
    assert readme_summary(text) == (
        "Boltons is a set of pure-Python utilities in the same spirit as the standard library, "
        "including: Atomic file saving, bolted on with fileutils; A highly-optimized "
        "OrderedMultiDict, in dictutils."
    )
    assert readme_summary("Title\n=====\n\nA tiny tool.\n") == ""


def test_the_docs_name_modules_and_title_the_pages_that_document_them() -> None:
    docs = project_docs(
        {
            "README.rst": "kit\n===\n\nKit is a library of small independent utility modules.\n",
            "docs/cache.rst": "Cache utilities\n===============\n\n.. automodule:: kit.cacheutils\n",
            "docs/text.md": "# Text helpers\n\n::: kit.strutils\n\nSee `kit.iterutils.chunked`.\n",
        },
        ("kit.cacheutils", "kit.strutils", "kit.iterutils"),
    )
    assert docs.summary == "Kit is a library of small independent utility modules."
    assert docs.source == "README.rst"
    assert docs.titles == {"kit.cacheutils": "Cache utilities", "kit.strutils": "Text helpers"}
    assert docs.mentions_module("kit.iterutils") and not docs.mentions_module("kit.timeutils")
    assert is_readme("README.md") and is_readme("docs/index.rst") and not is_readme("pkg/README.md")


def test_the_import_lines_of_a_document_say_what_its_users_import() -> None:
    text = textwrap.dedent(
        """\
        Use a module of it:

            >>> from kit.cacheutils import LRU
            >>> import kit.iterutils
            from kit import strutils, dictutils

        We import nothing on this line.
        """
    )
    docs = project_docs({"README.md": text})
    assert {"kit.cacheutils", "kit.iterutils", "kit.strutils", "kit.dictutils"} <= docs.imports
    assert "nothing" not in docs.imports and "on" not in docs.imports
