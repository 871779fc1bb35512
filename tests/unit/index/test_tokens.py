"""Lexical tokens: identifiers whole and split, prose words, stop words dropped."""

from kbc.index.tokens import path_tokens, tokens


def test_identifiers_are_kept_whole_and_split() -> None:
    assert tokens("parse_module(HTTPServerError)") == [
        "parse_module", "parse", "module", "httpservererror", "http", "server", "error"]


def test_stop_words_and_single_letters_are_dropped() -> None:
    assert tokens("if x is the value of self") == ["value"]


def test_paths_become_words() -> None:
    assert path_tokens("src/kbc/index/lexical_index.py") == [
        "src", "kbc", "index", "lexical_index", "lexical", "index", "py"]
