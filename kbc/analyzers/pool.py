"""Run the per-file analyzer over many files, always in worker processes.

A worker that dies (a crash in native code, the OOM killer) costs only the
file it was on: the remaining files are retried one at a time in a fresh
pool, and the file that kills a worker again is reported as failed.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from kbc.analyzers.code.languages import CODE_LANGUAGES
from kbc.analyzers.python.analyze import analyze_file
from kbc.domain.models import AnalysisFailed, AnalysisResult, AnalysisTask
from kbc.domain.progress import FileDone
from kbc.store.lock import forget_inherited_locks

# Below this many files one worker parses them all (more cost more to start than they save).
POOL_MIN_FILES = 24
# What a worker may allocate beyond what it starts with: a file that needs more fails alone
# (MemoryError, reported) instead of the machine running out of memory.
WORKER_MEMORY_BYTES = 3 * 1024**3

Analyzer = Callable[[AnalysisTask], AnalysisResult]


def analyze_task(task: AnalysisTask) -> AnalysisResult:
    """The analyzer of the task's language: libcst for Python, tree-sitter for the others."""
    if task.language in CODE_LANGUAGES:
        from kbc.analyzers.code.analyze import analyze_code_file

        return analyze_code_file(task)
    return analyze_file(task)


def worker_init(memory: int | None = None) -> None:
    """Every pool worker: die with the parent (a killed kbc leaves no orphans behind), never
    keep the parent's store lock, and allocate at most ``WORKER_MEMORY_BYTES`` more than it
    starts with."""
    forget_inherited_locks()
    _cap_memory(WORKER_MEMORY_BYTES if memory is None else memory)
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
        if os.getppid() == 1:  # the parent died before the line above took effect
            os._exit(1)


def _cap_memory(extra: int) -> None:
    """Cap this process's address space at its present size plus ``extra`` bytes (Linux)."""
    try:
        import resource

        with open("/proc/self/statm", encoding="ascii") as fh:
            pages = int(fh.read().split()[0])
        limit = pages * os.sysconf("SC_PAGE_SIZE") + extra
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, OSError, ValueError):
        pass  # no such limit here: a worker that runs out is still only its own file's loss


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))  # native threads too (ONNX, Chroma, a server)
    except OSError:
        import threading

        return threading.active_count()


def pool_context() -> multiprocessing.context.BaseContext:
    """How workers start: forked from a single-threaded process (cheap), else spawned afresh.
    A fork copies only the forking thread, so a lock another thread held then (an allocator's,
    a native library's) stays held in the child forever and the worker hangs."""
    if sys.platform.startswith("linux") and _threads() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def run_analysis(
    tasks: Sequence[AnalysisTask],
    workers: int,
    progress: FileDone | None = None,
    analyzer: Analyzer = analyze_task,
) -> list[AnalysisResult]:
    """Results for ``tasks``, in the same order; one per task, whatever happens."""
    report = progress or (lambda _result: None)
    if not tasks:
        return []
    # Always in worker processes, however few the files: a parser crash or a file that needs
    # more memory than a worker may have then costs only that file, never the build.
    if len(tasks) < POOL_MIN_FILES:
        workers = 1  # one worker: starting more costs more than they save
    workers = max(1, workers)
    done: dict[int, AnalysisResult] = {}
    chunksize = max(1, min(32, len(tasks) // (max(1, workers) * 8)))
    try:
        with ProcessPoolExecutor(
            max_workers=min(workers, len(tasks)),
            mp_context=pool_context(),
            initializer=worker_init,
            initargs=(WORKER_MEMORY_BYTES,),
        ) as pool:
            for index, result in enumerate(pool.map(analyzer, tasks, chunksize=chunksize)):
                done[index] = result
                report(result)
    except BrokenProcessPool:
        remaining = [i for i in range(len(tasks)) if i not in done]
        _isolate(tasks, remaining, done, report, analyzer)
    return [done[i] for i in range(len(tasks))]


def _isolate(
    tasks: Sequence[AnalysisTask],
    remaining: list[int],
    done: dict[int, AnalysisResult],
    report: FileDone,
    analyzer: Analyzer,
) -> None:
    """Finish ``remaining`` with one worker, so a crash points at its own file."""
    while remaining:
        futures: list[tuple[int, Future[AnalysisResult]]] = []
        try:
            with ProcessPoolExecutor(
                max_workers=1,
                mp_context=pool_context(),
                initializer=worker_init,
                initargs=(WORKER_MEMORY_BYTES,),
            ) as pool:
                futures = [(i, pool.submit(analyzer, tasks[i])) for i in remaining]
                for index, future in futures:
                    done[index] = future.result()
                    report(done[index])
            remaining = []
        except BrokenProcessPool:
            unfinished = [i for i, f in futures if i not in done]
            culprit = unfinished[0]
            failed = AnalysisFailed(
                tasks[culprit].path, "", "the analyzer process died on this file (crash or out of memory)"
            )
            done[culprit] = failed
            report(failed)
            remaining = unfinished[1:]
