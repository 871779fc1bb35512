"""Token counting: the encoding file comes from the installed packages, never a download."""

import multiprocessing
import os
from pathlib import Path
from typing import Any

from kbc.index.tokencount import CACHE_FILES, ENCODING, TiktokenCounter


def _count_in_new_cache(cache: str, start: Any, counts: Any) -> None:
    os.environ["KBC_CACHE_DIR"] = cache
    start.wait()
    counts.put(TiktokenCounter().count("def refund(order): return order.total"))


def test_workers_starting_at_once_on_a_new_cache_all_count(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    start, counts = context.Barrier(4), context.Queue()
    workers = [context.Process(target=_count_in_new_cache, args=(str(tmp_path), start, counts))
               for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [w.exitcode for w in workers] == [0, 0, 0, 0]
    assert len({counts.get(timeout=5) for _ in workers}) == 1
    assert sorted(p.name for p in (tmp_path / "tiktoken").iterdir()) == [CACHE_FILES[ENCODING]]
