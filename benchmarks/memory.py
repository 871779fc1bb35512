"""Peak memory of build, refresh and serve: sympy's sources, kbc's own repository and a
workspace of twenty repositories, each for every version of kbc named by ``--code``
(the same run, interleaved, so a baseline shares the machine's state).

    python benchmarks/memory.py --work DIR [--code LABEL=DIR ...] [--only build,serve,workspace]
        [--serve NAME=PATH ...] [--requests 20] [--markdown] [--update-results]

``--code LABEL=DIR`` runs kbc from the source tree DIR (on ``PYTHONPATH``); repeat it to
compare versions (default: this checkout, labelled ``this``). Measured, each in a process of
its own, RSS read from ``/proc`` every 50 ms:

- ``build``: ``kbc build --no-llm --wait`` of a fresh copy of sympy 1.14.0's sources (the
  wheel, fetched as ``benchmarks/cold_build.py`` does, under ``--work``) with an empty
  embedding cache, then ``kbc refresh`` after one file of it changed. Reported: the peak of
  the largest single process (``ru_maxrss``, what ``/usr/bin/time`` shows) and the peak of the
  process tree's summed RSS (pool workers included; pages they share are counted in each);
- ``serve``: ``kbc serve --transport http`` of one built repository (``--serve NAME=PATH``,
  repeated; default: a clone of this checkout, built with vectors by the first ``--code``),
  its RSS (children included) once it answers, after ``--requests`` REST retrieves of new
  tasks, and the most the server process itself held (a child forked to run git counts the
  parent's pages again until it execs, so the tree's sum is no peak); once lexical
  (``-c index.embed_model=none``) and once hybrid;
- ``snapshot``: the build's last step alone, in a process of its own: the exact-search
  snapshot of each ``--serve`` store written again from its Chroma store (every vector read
  back), its RSS growth (``VmHWM``) and the digest of the matrix written;
- ``workspace``: ``kbc serve`` of the twenty repositories of ``benchmarks/workspace.py``
  (built lexically, as there): started, after one retrieve in each repository, after
  ``--requests`` retrieves across all.

Every version serves the same stores, so the runs differ only in the server's code.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from memory_peaks import NEUTRAL, Watch, env_for, kbc, mib, run_watched, status_mib
from memory_report import markdown
from results_file import update_section
from served import free_port, wait_healthy
from sources import fresh_copy, source_of
from timing import Load, clock, interleaved
from workspace import MORE, PACKAGES, TASKS, prepare

HERE = Path(__file__).resolve().parent.parent
SERVE_TASKS = (
    "add a timeout to the command that serves the knowledge base",
    "where is a slice packed under its token budget",
    "refresh the store after one file changed",
    "check the bearer token of a request to the http server",
    "simplify a trigonometric expression",
    "solve a system of linear equations",
    "print a matrix as LaTeX",
    "integrate a rational function",
)
TOUCHED = "sympy/core/basic.py"  # the one file the refresh finds changed
Config = TypeVar("Config")


def in_rounds(
    codes: dict[str, Path], configs: list[Config], run: Callable[[str, Path, Config], None], load: Load
) -> None:
    """Every version of kbc on each of ``configs``: a round per config, the versions' order
    rotated from round to round (so no version always runs first)."""
    if not configs:
        return
    pending = {label: iter(configs) for label in codes}

    def variant(label: str, code: Path) -> Callable[[], None]:
        return lambda: run(label, code, next(pending[label]))

    interleaved({label: variant(label, code) for label, code in codes.items()}, len(configs), load)


# -- build and refresh ----------------------------------------------------------------------


def build_round(code: Path, work: Path) -> dict[str, Any]:
    """A cold ``kbc build --wait`` of sympy, then a refresh after one file changed."""
    source, _ = source_of("sympy", work)
    tree = fresh_copy(source, work, "sympy")
    cache = work / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True)
    env = env_for(code, cache)
    built = run_watched(kbc("build", "--no-llm", "--wait", str(tree), "--format", "json"), env)
    touched = tree / TOUCHED
    touched.write_text(touched.read_text() + "\n\ndef _touched_by_the_benchmark():\n    return 1\n")
    refreshed = run_watched(kbc("refresh", "--no-llm", str(tree)), env)
    digest = store_digest(code, tree)
    shutil.rmtree(cache, ignore_errors=True)
    return {"build": built, "refresh": refreshed, "store": digest}


def store_digest(code: Path, tree: Path) -> str:
    """A digest of every chunk's id and text and every vector's id in the store: two builds
    that stored the same units hash the same."""
    script = (
        "import hashlib, sys\n"
        "from pathlib import Path\n"
        "from kbc.index.lexical import LexicalIndex\n"
        "from kbc.store.layout import lexical_path\n"
        "lexical = LexicalIndex(lexical_path(Path(sys.argv[1]) / '.kbc'))\n"
        "digest = hashlib.sha256()\n"
        "for chunk in sorted(lexical.all_chunks(), key=lambda c: c.id):\n"
        "    digest.update(chunk.id.encode() + b'\\0' + chunk.text.encode() + b'\\0')\n"
        "lexical.close()\n"
        "print(digest.hexdigest()[:16])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tree)],
        capture_output=True,
        text=True,
        env=env_for(code),
        cwd=NEUTRAL,
    )
    return done.stdout.strip() or f"unreadable: {done.stderr[-300:]}"


def snapshot_child(root: Path) -> None:
    """In a process of its own: write the exact-search snapshot of the built store at ``root``
    into a scratch folder, every vector read back from Chroma (what a build does after
    embedding); print the RSS growth it took and the matrix's digest."""
    import hashlib

    from kbc.domain.settings import Settings
    from kbc.index.exact import load_snapshot, write_units_snapshot
    from kbc.index.lexical import LexicalIndex
    from kbc.index.units import units_of
    from kbc.services.components import Components
    from kbc.store.layout import lexical_path

    store = root / ".kbc"
    embedder, vectors, _ = Components().open_embedding(store, root, Settings(), lazy=True)
    assert embedder is not None and vectors is not None
    lexical = LexicalIndex(lexical_path(store))
    units = units_of(lexical.all_chunks(), embedder.model_id, tests=False)
    made = vectors.made_by()
    assert made is not None
    vectors.ids()  # Chroma opened before the measure
    before = status_mib("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # the high-water mark starts again here
    with tempfile.TemporaryDirectory() as scratch:
        with clock() as writing:
            digest = write_units_snapshot(Path(scratch), made.key, "", units, vectors)
        seconds = writing.wall
        peak = status_mib("VmHWM")
        snapshot = load_snapshot(Path(scratch), digest)
        assert snapshot is not None
        matrix = hashlib.sha256(bytes(snapshot.matrix)).hexdigest()[:16]
    print(
        json.dumps(
            {
                "units": len(units),
                "growth": round(peak - before, 1),
                "seconds": round(seconds, 1),
                "matrix": matrix,
            }
        )
    )


def snapshot_round(code: Path, root: Path) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).resolve()),
            "--work",
            str(NEUTRAL),
            "--snapshot-child",
            str(root),
        ],
        capture_output=True,
        text=True,
        env=env_for(code),
        cwd=NEUTRAL,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def snapshots(
    codes: dict[str, Path], stores: dict[str, str], rows: dict[str, dict[str, Any]], load: Load
) -> None:
    def one(label: str, code: Path, store: tuple[str, str]) -> None:
        name, repo = store
        rows[label].setdefault("snapshot", {})[name] = found = snapshot_round(code, Path(repo))
        print(label, name, "snapshot", found, file=sys.stderr, flush=True)

    in_rounds(codes, list(stores.items()), one, load)


# -- serve ----------------------------------------------------------------------------------


def start_server(
    code: Path, repos: list[str], lexical: bool, log: Path
) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    settings = ["-c", "index.embed_model=none"] if lexical else []
    args = [arg for repo in repos for arg in ("--repo", repo)]
    with log.open("wb") as written:
        server = subprocess.Popen(
            kbc(*settings, "serve", "--transport", "http", "--port", str(port), *args),
            stdout=written,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**env_for(code), "KBC_FETCH_SECONDS": "0"},
            cwd=NEUTRAL,  # ``python -m`` puts its working folder first on the path
        )
    url = f"http://127.0.0.1:{port}"
    wait_healthy(server, url, 180, log)
    return server, url


def retrieve(url: str, task: str, repository: str | None = None) -> None:
    body: dict[str, Any] = {"task": task, "budget": 4000}
    if repository is not None:
        body["repository"] = repository
    answer = httpx.post(f"{url}/api/v1/retrieve", json=body, timeout=600)
    if answer.status_code != 200:
        raise SystemExit(f"retrieve {task!r}: {answer.status_code} {answer.text[:500]}")


def serve_round(code: Path, repo: Path, lexical: bool, requests: int, work: Path) -> dict[str, Any]:
    server, url = start_server(code, [str(repo)], lexical, work / "server.log")
    watch = Watch(server.pid)
    try:
        time.sleep(0.5)
        started = watch.sample()
        retrieve(url, SERVE_TASKS[0])
        first = watch.sample()
        for n in range(requests):
            retrieve(url, f"{SERVE_TASKS[n % len(SERVE_TASKS)]} ({n})")
        after = watch.sample()
    finally:
        server.terminate()
        server.wait(30)
        watch.stop()
    return {"started": mib(started), "first": mib(first), "after": mib(after), "peak": mib(watch.one_peak)}


def workspace_round(code: Path, repos: dict[str, Path], requests: int, work: Path) -> dict[str, Any]:
    named = [f"{name}={path}" for name, path in repos.items()]
    server, url = start_server(code, named, True, work / "workspace-server.log")
    watch = Watch(server.pid)
    try:
        time.sleep(0.5)
        started = watch.sample()
        for n, name in enumerate(repos):
            retrieve(url, TASKS[n % len(TASKS)], name)
        each = watch.sample()
        for n in range(requests):
            retrieve(url, f"{TASKS[n % len(TASKS)]} ({n})")
        after = watch.sample()
    finally:
        server.terminate()
        server.wait(30)
        watch.stop()
    return {"started": mib(started), "each": mib(each), "after": mib(after), "peak": mib(watch.one_peak)}


def built_kbc(first: Path, work: Path) -> Path:
    """A clone of this checkout, built (with vectors) by the first version of kbc."""
    target = work / "kbc-served"
    if not (target / ".kbc").is_dir():
        shutil.rmtree(target, ignore_errors=True)
        subprocess.run(["git", "clone", "-q", str(HERE), str(target)], check=True)
        subprocess.run(kbc("build", "--no-llm", "--wait", str(target)), check=True, env=env_for(first))
    return target


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--code", action="append", default=[], metavar="LABEL=DIR")
    parser.add_argument("--only", default="build,serve,workspace")
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--serve", action="append", default=[], metavar="NAME=PATH")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--update-results", action="store_true")
    parser.add_argument("--snapshot-child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.snapshot_child is not None:
        snapshot_child(args.snapshot_child)
        return
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    codes = {}
    for given in args.code or [f"this={HERE}"]:
        label, _, folder = given.partition("=")
        codes[label] = Path(folder).resolve()
    first = next(iter(codes.values()))
    only = set(args.only.split(","))
    rows: dict[str, dict[str, Any]] = {label: {} for label in codes}
    load = Load()
    if "serve" in only:
        served = dict(given.partition("=")[::2] for given in args.serve) or {
            "kbc": str(built_kbc(first, work))
        }

        def serve_one(label: str, code: Path, config: tuple[str, str, bool]) -> None:
            name, repo, lexical = config
            way = "lexical" if lexical else "hybrid"
            found = serve_round(code, Path(repo), lexical, args.requests, work)
            rows[label].setdefault("serve", {})[f"{name} {way}"] = found
            print(label, name, way, found, file=sys.stderr, flush=True)

        configs = [(name, repo, lexical) for name, repo in served.items() for lexical in (True, False)]
        in_rounds(codes, configs, serve_one, load)
    if "snapshot" in only:  # the build's vector snapshot alone, on each store served
        snapshots(codes, dict(given.partition("=")[::2] for given in args.serve), rows, load)
    if "workspace" in only:
        repos = prepare(work / "workspace", [*PACKAGES, *MORE])

        def workspace_one(label: str, code: Path, repos: dict[str, Path]) -> None:
            rows[label]["workspace"] = found = workspace_round(code, repos, args.requests, work)
            print(label, "workspace", found, file=sys.stderr, flush=True)

        in_rounds(codes, [repos], workspace_one, load)
    if "build" in only:

        def build_one(label: str, code: Path, where: Path) -> None:
            rows[label]["build"] = build_round(code, where)
            print(label, "build", rows[label]["build"], file=sys.stderr, flush=True)

        in_rounds(codes, [work], build_one, load)
    (work / "memory.json").write_text(json.dumps(rows, indent=1))
    text = markdown(rows, args.requests)
    if args.markdown:
        print(text)
    if args.update_results:
        command = "python benchmarks/memory.py --work DIR " + " ".join(
            f"--code {label}=DIR" for label in codes
        )
        update_section(
            "memory", "Memory: build, refresh and serve (`benchmarks/memory.py`)", text, command, load
        )


if __name__ == "__main__":
    main()
