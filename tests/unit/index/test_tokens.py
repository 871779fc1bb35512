"""Lexical tokens: identifiers whole and split, prose words, stop words dropped."""

from kbc.index.tokens import path_tokens, tokens


def test_identifiers_are_kept_whole_and_split() -> None:
    assert tokens("parse_module(HTTPServerError)") == [
        "parse_module",
        "parse",
        "module",
        "httpservererror",
        "http",
        "server",
        "error",
    ]


def test_stop_words_and_single_letters_are_dropped() -> None:
    assert tokens("if x is the value of self") == ["value"]


def test_paths_become_words() -> None:
    assert path_tokens("src/kbc/index/lexical_index.py") == [
        "src",
        "kbc",
        "index",
        "lexical_index",
        "lexical",
        "index",
        "py",
    ]


def test_words_of_every_script_are_folded_the_same_on_both_sides() -> None:
    from kbc.index.tokens import fold

    assert tokens("Ödeme kuralları / İade süresi 14 gündür") == [
        "odeme",
        "kurallari",
        "iade",
        "suresi",
        "14",
        "gundur",
    ]
    assert tokens("ODEME KURALLARI, IADE SURESI") == ["odeme", "kurallari", "iade", "suresi"]
    assert [fold(w) for w in ("IĞDIR", "ışık", "Straße", "naïve", "Ærø")] == [
        "igdir",
        "isik",
        "strasse",
        "naive",
        "ærø",
    ]
    assert tokens("naïve_value résumé") == ["naive_value", "naive", "value", "resume"]
    assert tokens("東京 の 設定") == ["東京", "設定"]  # single letters are dropped in every script


def test_ascii_keeps_its_tokens() -> None:
    text = "def parse_module(HTTPServerError, x2): return a_b + 42"
    assert tokens(text) == [
        "parse_module",
        "parse",
        "module",
        "httpservererror",
        "http",
        "server",
        "error",
        "x2",
        "a_b",
        "42",
    ]


def test_a_word_read_again_gives_the_same_tokens() -> None:
    text = "parse_module HTTPServerError Ödeme parse_module the x"
    assert (
        tokens(text)
        == tokens(text)
        == [
            "parse_module",
            "parse",
            "module",
            "httpservererror",
            "http",
            "server",
            "error",
            "odeme",
            "parse_module",
            "parse",
            "module",
        ]
    )
