"""The screens searched over a whole text find the lines a search of each line finds."""

from __future__ import annotations

import random
import re
import sys

import pytest

from kbc.analyzers.screen import Screen, lowered


@pytest.mark.slow
def test_lowered_takes_a_character_for_an_ascii_letter_exactly_when_case_insensitive_matching_does() -> None:
    any_letter = re.compile("(?i)[a-zñ]")
    for code in range(sys.maxunicode + 1):
        if 0xD800 <= code < 0xE000:
            continue
        ch = chr(code)
        low = lowered(ch)
        assert len(low) == 1, ch
        if any_letter.fullmatch(ch):
            assert re.fullmatch("(?i)" + re.escape(low), ch) and re.fullmatch("[a-zñ]", low), ch
        else:
            assert not re.fullmatch("[a-zñ]", low), ch


def test_a_screen_finds_the_lines_a_search_of_each_line_finds() -> None:
    words = ("key", "secret", "pass", "token")
    screen = Screen.of((r"[A-Za-z0-9+/=_\-]{16,}", r"://[^\s/]*:[^\s/]*@"), words)
    each = re.compile(r"[A-Za-z0-9+/=_\-]{16,}|(?i:key|secret|pass|token)|://[^\s/]*:[^\s/]*@")
    rng = random.Random(7)
    pieces = [
        "KEY",
        "ſecret",
        "İpass",
        "Kelvin-K: \u212aey",
        "toKen",
        "a" * 16,
        "x://u:p@h",
        "İİ",
        "ı",
        "plain words",
        " ",
        "ünïcödé",
        "abc_def",
        "Pass",
        "\r",
        "\t",
        "\n",
    ]  # a line that holds a newline: a reading's lines, as readlines gives them
    for _ in range(200):
        lines = [
            "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 5)))
            for _ in range(rng.randrange(1, 30))
        ]
        expected = [i for i, line in enumerate(lines) if each.search(line)]
        assert screen.lines(lines) == expected
        assert screen.search("\n".join(lines)) == bool(expected)
