"""A licence header the repository's files share is left out of the passages it opens."""

from kbc.domain.models import Chunk
from kbc.index.tokencount import default_counter
from kbc.retrieval.boilerplate import Boilerplate, header_lines

LICENCE = (
    "# Copyright {year} The Shop Authors\n"
    "#\n"
    "# Licensed under the Apache License, Version 2.0 (the License); you may\n"
    "# not use this file except in compliance with the License.\n"
    "\n"
)
COUNTER = default_counter()


def opening(path: str, body: str, year: int = 2020) -> Chunk:
    text = LICENCE.format(year=year) + body
    return Chunk(f"{path}:1", path, 1, text.count("\n"), "code", "python", text, unit="prelude")


def test_the_leading_comment_block_is_found_and_a_shebang_counts_with_it() -> None:
    assert header_lines(["#!/usr/bin/env python\n", "# one\n", "# two\n", "\n", "import os\n"]) == 3
    assert header_lines(["import os\n"]) == 0


def test_a_header_shared_by_three_files_is_left_out_whatever_its_year() -> None:
    files = [opening(f"shop/m{i}.py", f'"""Module {i}."""\nimport os\n', 2019 + i) for i in range(3)]
    boilerplate = Boilerplate(files)
    trimmed = boilerplate.trimmed(files[0], COUNTER.count, frozenset({"refund"}))
    assert trimmed is not None
    assert trimmed.start_line == 6 and trimmed.text == '"""Module 0."""\nimport os\n'
    assert trimmed.tokens == COUNTER.count(trimmed.text)


def test_a_header_of_two_files_only_is_the_files_own_text() -> None:
    files = [opening(f"shop/m{i}.py", "import os\n") for i in range(2)]
    assert Boilerplate(files).trimmed(files[0], COUNTER.count, frozenset()) == files[0]


def test_a_task_about_the_licence_keeps_it_and_a_header_alone_is_dropped() -> None:
    files = [opening(f"shop/m{i}.py", "import os\n") for i in range(3)]
    only = Chunk("h:1", "shop/h.py", 1, 5, "code", "python", LICENCE.format(year=2021), unit="module")
    boilerplate = Boilerplate([*files, only])
    assert boilerplate.trimmed(files[0], COUNTER.count, frozenset({"apache", "license"})) == files[0]
    assert boilerplate.trimmed(only, COUNTER.count, frozenset({"refund"})) is None
