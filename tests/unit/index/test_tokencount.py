"""Token counting: the encoding comes from the file the installed packages ship, checked, and
is built without a download, a cache or a change to the environment."""

import os
import pickle

from kbc.index.tokencount import SHA256, SHIPPED_FILE, TiktokenCounter, _shipped_file


def test_cl100k_counts_as_published() -> None:
    counter = TiktokenCounter()
    # counts of tiktoken.get_encoding("cl100k_base") on the same texts
    assert [
        counter.count(t)
        for t in (
            "def refund(order): return order.total",
            "hello world",
            "ünïcödé  \n\n  spaces\t\ttabs <|endoftext|> 12345678 ",
        )
    ] == [7, 2, 23]


def test_the_encoding_is_read_where_it_is_shipped_and_nothing_is_written() -> None:
    import hashlib

    before = dict(os.environ)
    shipped = _shipped_file(SHIPPED_FILE)
    assert shipped is not None and hashlib.sha256(shipped.read_bytes()).hexdigest() == SHA256
    TiktokenCounter()
    assert dict(os.environ) == before  # no TIKTOKEN_CACHE_DIR, nothing else


def test_a_counter_sent_to_another_process_counts_the_same() -> None:
    """The counter lets go of the Python copy of the ranks; pickled, it is rebuilt whole."""
    counter = TiktokenCounter()
    copied = pickle.loads(pickle.dumps(counter))
    texts = ("def refund(order): return order.total", "ünïcödé  \n\n  spaces\t\ttabs 12345678 " * 20)
    assert [copied.count(t) for t in texts] == [counter.count(t) for t in texts]
    assert copied.count(texts[0]) == 7
