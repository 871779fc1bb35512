"""A command that reads the facts after a first build waits for them while the process reading
them lives, whatever it reads of the index meanwhile, and returns once they are in."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from kbc.services.later import await_facts
from kbc.store.lock import fill_lock


def test_no_readable_index_and_no_facts_while_the_process_lives_is_a_wait(tmp_path: Path) -> None:
    store = tmp_path / ".kbc"
    store.mkdir()
    said: list[str] = []
    failed: list[BaseException] = []

    def wait() -> None:
        try:
            await_facts(store, said.append, timeout=60, poll=0.05)
        except BaseException as exc:
            failed.append(exc)

    with fill_lock(store):  # the process after the build, replacing the index
        waiting = threading.Thread(target=wait)
        waiting.start()
        time.sleep(0.5)
        assert waiting.is_alive() and said and not failed
        (store / "CURRENT").write_text("gen-0")  # the facts are in
        waiting.join(10)
    assert not waiting.is_alive() and not failed


def test_a_store_never_built_is_not_waited_for(tmp_path: Path) -> None:
    store = tmp_path / ".kbc"
    store.mkdir()
    said: list[str] = []
    await_facts(store, said.append, timeout=60, poll=0.05)  # returns: the reader's own error follows
    assert said == []
