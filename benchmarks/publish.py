"""Publishing stores to S3-compatible storage and serving them: publish and pull times, and the
requests a second of one server against two following the same publication.

    python benchmarks/publish.py [--repo NAME=DIR ...] [--seconds 20] [--clients 8] [--rounds 3]
        [--update-results]

An S3 server on loopback (moto's, a process of its own) stands for the object store. Each
repository (default: kbc's own) is built lexically (``-c index.embed_model=none``) into a
store in a temporary folder, then, each through the command line a CI job runs:

- ``kbc publish``, first into an empty bucket (every file sent), then again with nothing
  changed (one look per file, the manifest sent again); beside them, the baseline of the same
  run: the same files copied on the local disk (``shutil.copytree``);
- the pull a server does on its start (the manifest read, every file downloaded and checked
  against its sha256, into an empty cache), timed in this process with the code
  ``kbc serve`` runs (:func:`kbc.services.pull.pull`).

Then, for the first repository, ``kbc serve --transport http`` processes following its
publication: ``--clients`` clients (threads, one ``httpx.Client`` each) send REST retrieves
of tasks never sent before (each ranked: no slice cache) for ``--seconds``, all to one
server, then round-robin to two, ``--rounds`` times over (alternated, so that a change in the
machine's load falls on both). Requests a second of each phase, their ratio, and failed
requests (any status but 200) are reported. Both servers run on this machine's cores, so the
ratio says what a second process adds on the same machine, not on a second one.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import httpx
from timing import Load, clock, interleaved, timed

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BUCKET = "kbc-bench"
LEXICAL = ("-c", "index.embed_model=none")
TASKS = (
    "how does retrieval stay within the token budget",
    "where is the configuration read and validated",
    "add an option to the command line",
    "how are errors reported to the user",
    "what happens when a request arrives at the server",
)
CONTEXTS = ("in the tests", "for a new contributor", "before a release", "when it fails")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def env_for(endpoint: str, home: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KBC_", "AWS_"))}
    env.update(
        AWS_ENDPOINT_URL=endpoint,
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        AWS_DEFAULT_REGION="us-east-1",
        KBC_CONFIG="",
        PYTHONPATH=str(ROOT),
    )
    if home is not None:
        env["HOME"] = str(home)
    return env


@contextmanager
def s3_server(folder: Path) -> Iterator[str]:
    import boto3

    port = free_port()
    with (folder / "moto.log").open("w") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
        )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        client = boto3.session.Session().client(
            "s3",
            endpoint_url=endpoint,
            region_name="us-east-1",
            aws_access_key_id="bench",
            aws_secret_access_key="bench",
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                client.create_bucket(Bucket=BUCKET)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield endpoint
    finally:
        server.terminate()
        server.wait(timeout=30)


def kbc(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "kbc", *LEXICAL, *args], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"kbc {' '.join(args)} failed: {done.stderr[-2000:]}")
    return done


def timed_publish(name: str, root: Path, store: Path, endpoint: str) -> tuple[float, str]:
    with clock() as sample:
        done = kbc(
            "publish",
            "--repo",
            str(root),
            "--store",
            str(store),
            "--name",
            name,
            "--format",
            "json",
            f"s3://{BUCKET}/stores",
            env=env_for(endpoint),
        )
    return sample.wall, done.stdout


def timed_pull(name: str, endpoint: str, cache: Path) -> float:
    os.environ.update({k: v for k, v in env_for(endpoint).items() if k.startswith("AWS_")})
    from kbc.providers.objectstore import Bucket, parse_location
    from kbc.services.pull import newest, pull

    with clock() as sample:
        bucket = Bucket(parse_location(f"s3://{BUCKET}/stores/{name}"))
        manifest = newest(bucket)
        assert manifest is not None
        pull(bucket, manifest, cache)
    return sample.wall


@contextmanager
def server(name: str, endpoint: str, home: Path) -> Iterator[str]:
    port = free_port()
    home.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "kbc",
        *LEXICAL,
        "serve",
        "--transport",
        "http",
        "--port",
        str(port),
        "--repo",
        f"{name}=s3://{BUCKET}/stores/{name}",
    ]
    with (home / "serve.log").open("w") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=log, stdin=subprocess.DEVNULL, env=env_for(endpoint, home)
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                listed = httpx.get(f"{url}/api/v1/repositories", timeout=5).json()
                if listed[0]["status"] == "ready":
                    break
            except (httpx.HTTPError, ValueError, KeyError, IndexError):
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"kbc serve did not start: {(home / 'serve.log').read_text()[-2000:]}")
            time.sleep(0.3)
        httpx.post(f"{url}/api/v1/retrieve", json={"task": TASKS[0]}, timeout=60)  # opened, warm
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def load(urls: list[str], seconds: float, clients: int, offset: int) -> tuple[int, int]:
    """Requests answered and failed by ``clients`` threads, round-robin over ``urls``."""
    counter = itertools.count(offset)
    lock = threading.Lock()
    done = [0, 0]
    stop = time.monotonic() + seconds

    def client(index: int) -> None:
        with httpx.Client(timeout=60) as http:
            turn = index
            while time.monotonic() < stop:
                with lock:
                    n = next(counter)
                task = f"{TASKS[n % len(TASKS)]} {CONTEXTS[n // len(TASKS) % len(CONTEXTS)]} (case {n})"
                url = urls[turn % len(urls)]
                turn += 1
                try:
                    ok = http.post(f"{url}/api/v1/retrieve", json={"task": task}).status_code == 200
                except httpx.HTTPError:
                    ok = False
                with lock:
                    done[0 if ok else 1] += 1

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return done[0], done[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--update-results", action="store_true")
    args = parser.parse_args()
    repos = [tuple(r.split("=", 1)) for r in args.repo] or [("kbc", str(ROOT))]
    rows = []
    with tempfile.TemporaryDirectory(prefix="kbc-bench-publish-") as scratch:
        work = Path(scratch)
        with s3_server(work) as endpoint:
            for name, where in repos:
                root, store = Path(where).resolve(), work / name / "store"
                building = partial(
                    kbc, "build", "--no-llm", "--store", str(store), str(root), env=env_for(endpoint)
                )
                build = timed(building).wall
                files = [p for p in store.rglob("*") if p.is_file()]
                copy = timed(partial(shutil.copytree, store, work / name / "copy")).wall
                first, _ = timed_publish(name, root, store, endpoint)
                again, _ = timed_publish(name, root, store, endpoint)
                pull = timed_pull(name, endpoint, work / name / "pulled")
                size = sum(p.stat().st_size for p in (work / name / "pulled").rglob("*") if p.is_file())
                rows.append((name, len(files), size, build, copy, first, again, pull))
                print(
                    f"{name}: build {build:.1f} s, publish {first:.2f} s, again {again:.2f} s, "
                    f"pull {pull:.2f} s",
                    file=sys.stderr,
                )
            served = repos[0][0]
            single, double = [0, 0], [0, 0]
            readings = Load()

            def phase(urls: list[str], total: list[int]) -> Callable[[], None]:
                """Each call, one phase of requests to ``urls``, its counts added to ``total``."""
                turns = itertools.count()

                def run() -> None:
                    offset = next(turns) * 2_000_000 + len(urls)
                    answered, failed = load(urls, args.seconds, args.clients, offset)
                    total[0] += answered
                    total[1] += failed

                return run

            with server(served, endpoint, work / "one") as one, server(served, endpoint, work / "two") as two:
                # alternated (the order rotated each round), so a change in the machine's load hits both
                interleaved(
                    {"one": phase([one], single), "two": phase([one, two], double)}, args.rounds, readings
                )
    lines = [
        "S3: moto's server on loopback; stores built lexically (no vectors).",
        "",
        "| repository | store files | published bytes | build | local copy (baseline) "
        "| publish, empty bucket | publish, nothing changed | pull into an empty cache |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, files, size, build, copy, first, again, pull in rows:
        lines.append(
            f"| {name} | {files} | {size / 1e6:.1f} MB | {build:.1f} s | {copy * 1000:.0f} ms "
            f"| {first:.2f} s "
            f"({first / copy:.0f}x copy, {first / build:.2f}x build) | {again:.2f} s | {pull:.2f} s "
            f"({pull / copy:.0f}x copy) |"
        )
    rate1, rate2 = single[0] / args.seconds / args.rounds, double[0] / args.seconds / args.rounds
    lines += [
        "",
        f"Serving {served}'s publication, {args.clients} clients, distinct tasks (each ranked), "
        f"{args.rounds} rounds of {args.seconds:.0f} s with one server then {args.seconds:.0f} s with two:",
        "",
        "| servers | requests/s | failed | against one |",
        "| --- | ---: | ---: | ---: |",
        f"| one | {rate1:.1f} | {single[1]} | 1.00 |",
        f"| two, round-robin | {rate2:.1f} | {double[1]} | {rate2 / rate1:.2f} |",
    ]
    text = "\n".join(lines)
    print(text)
    if args.update_results:
        from results_file import update_section

        command = "python benchmarks/publish.py " + " ".join(sys.argv[1:])
        update_section(
            "publish",
            "Publishing and serving publications (`benchmarks/publish.py`)",
            text,
            command.replace(" --update-results", ""),
            readings,
        )


if __name__ == "__main__":
    main()
