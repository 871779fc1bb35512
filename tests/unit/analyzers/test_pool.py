"""The process pool: every file gets a result, even when a worker dies."""

import os

import pytest

from kbc.analyzers.pool import POOL_MIN_FILES, run_analysis
from kbc.analyzers.python.analyze import analyze_file
from kbc.domain.models import AnalysisFailed, AnalysisOk, AnalysisResult, AnalysisTask


def crash_on_poison(task: AnalysisTask) -> AnalysisResult:
    """A real analyzer that takes its worker process down on one file."""
    if task.path.endswith("poison.py"):
        os._exit(70)
    return analyze_file(task)


def tasks_for(tmp_path, names: list[str]) -> list[AnalysisTask]:  # type: ignore[no-untyped-def]
    out = []
    for name in names:
        path = tmp_path / name
        path.write_text(f"def {path.stem}(): ...\n")
        out.append(AnalysisTask(name, str(path), path.stem, False))
    return out


def test_a_single_threaded_process_forks_its_workers() -> None:
    import subprocess
    import sys

    script = "from kbc.analyzers.pool import pool_context; print(pool_context().get_start_method())"
    started = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert started.stdout.strip() == ("fork" if sys.platform.startswith("linux") else "spawn")


def test_results_come_back_in_task_order_from_the_pool(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tasks = tasks_for(tmp_path, [f"m{i}.py" for i in range(POOL_MIN_FILES + 6)])
    seen: list[AnalysisResult] = []
    results = run_analysis(tasks, workers=2, progress=seen.append)
    assert [r.path for r in results] == [t.path for t in tasks]
    assert all(isinstance(r, AnalysisOk) for r in results)
    assert len(seen) == len(tasks)


@pytest.mark.slow
def test_a_dying_worker_costs_only_its_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    names = [f"m{i}.py" for i in range(POOL_MIN_FILES)] + ["poison.py"] + ["z1.py", "z2.py"]
    tasks = tasks_for(tmp_path, names)
    results = run_analysis(tasks, workers=2, analyzer=crash_on_poison)
    failed = [r for r in results if isinstance(r, AnalysisFailed)]
    assert [(f.path, f.error) for f in failed] == [
        ("poison.py", "the analyzer process died on this file (crash or out of memory)")
    ]
    assert sum(isinstance(r, AnalysisOk) for r in results) == len(tasks) - 1


@pytest.mark.slow
def test_a_file_too_large_for_a_worker_fails_alone_even_among_few(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from kbc.analyzers import pool

    monkeypatch.setattr(pool, "WORKER_MEMORY_BYTES", 300 * 1024**2)  # a cap this test can reach
    (tmp_path / "huge.py").write_text("x = 1\n" * 400_000)  # 2.4 MB: libcst wants some 2 GB
    (tmp_path / "ok.py").write_text("def f():\n    return 1\n")
    tasks = [AnalysisTask(name, str(tmp_path / name), name[:-3], False) for name in ("huge.py", "ok.py")]
    huge, ok = run_analysis(tasks, workers=1)  # few files, one worker: still not in this process
    assert isinstance(huge, AnalysisFailed)
    assert huge.error == "too large to analyze within the memory a worker may use"
    assert isinstance(ok, AnalysisOk)


@pytest.mark.slow
def test_a_crash_among_few_files_costs_only_its_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tasks = tasks_for(tmp_path, ["a.py", "poison.py", "b.py"])  # far fewer than a pool's threshold
    results = run_analysis(tasks, workers=1, analyzer=crash_on_poison)
    assert [type(r).__name__ for r in results] == ["AnalysisOk", "AnalysisFailed", "AnalysisOk"]


@pytest.mark.slow
def test_a_threaded_process_spawns_its_workers_with_the_same_cap(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import threading

    from kbc.analyzers import pool

    stop = threading.Event()
    helper = threading.Thread(target=stop.wait)  # a process with threads (a server, ONNX) never forks
    helper.start()
    try:
        assert pool.pool_context().get_start_method() == "spawn"
        monkeypatch.setattr(pool, "WORKER_MEMORY_BYTES", 300 * 1024**2)
        (tmp_path / "huge.py").write_text("x = 1\n" * 400_000)
        (tmp_path / "ok.py").write_text("def f():\n    return 1\n")
        tasks = [AnalysisTask(n, str(tmp_path / n), n[:-3], False) for n in ("huge.py", "ok.py")]
        huge, ok = run_analysis(tasks, workers=1)
    finally:
        stop.set()
        helper.join()
    assert isinstance(huge, AnalysisFailed) and isinstance(ok, AnalysisOk)
