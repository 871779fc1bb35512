"""One long line against the same bytes in short lines: build time, and a huge task's effect
on the retrieves served beside it.

    python benchmarks/long_lines.py [--chars 1000000] [--repeats 3] [--task-chars 100000]
        [--work DIR] [--update-results]

1. Build: for each shape of text (minified JavaScript, one run of letters, a dotted run, a
   base64 blob), a repository holding one file of ``--chars`` characters on a single line and
   one holding the same characters cut into 100-character lines are built cold (lexical, no
   LLM), alternately, ``--repeats`` times; the ratio is the median single-line build time over
   the median short-line one.
2. Serving: ``kbc serve --transport http`` over a lexical build of a clone of this repository;
   a client asks an ordinary task again and again (POST /api/v1/retrieve) while another
   client asks a ``--task-chars`` task of each shape. The delay is the slowest ordinary
   answer during the huge one, less the median ordinary answer alone.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import socket
import statistics
import string
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from itertools import count
from pathlib import Path

from results_file import report
from timing import Load, clock, interleaved, median

ROOT = Path(__file__).resolve().parents[1]
LEXICAL = ["-c", "index.embed_model=none"]
ORDINARY = "how does retrieval stay within the token budget?"


def shapes(chars: int, seed: int = 7) -> dict[str, str]:
    rng = random.Random(seed)
    minified: list[str] = []
    size = 0
    while size < chars:
        word = "".join(rng.choice(string.ascii_letters) for _ in range(rng.randint(1, 12)))
        piece = word + rng.choice(".=();,-+:/")
        minified.append(piece)
        size += len(piece)
    blob = base64.b64encode(rng.randbytes(chars)).decode()
    return {
        "minified JavaScript": "".join(minified)[:chars],
        "one run of letters": "x" * chars,
        "a dotted run": "a." * (chars // 2),
        "a base64 blob": blob[:chars],
    }


def git(root: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@kbc.invalid",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@kbc.invalid",
    }
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


def repository(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "app.py").write_text('"""An application."""\n\n\ndef main():\n    return 1\n')
    (folder / "blob.js").write_text(text + "\n")
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "one file of data")
    return folder


def build(repo: Path, store: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "kbc", *LEXICAL, "build", str(repo), "--no-llm", "--store", str(store)],
        check=True,
        capture_output=True,
    )


def fresh_builds(repo: Path, stores: Path) -> Callable[[], None]:
    """A cold build of ``repo`` each call, into a store of its own (``STORES-0``, ``STORES-1``, …)."""
    numbers = count()
    return lambda: build(repo, stores.with_name(f"{stores.name}-{next(numbers)}"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def post(url: str, task: str, timeout: float = 600) -> float:
    import httpx

    with clock() as sample:
        answer = httpx.post(f"{url}/api/v1/retrieve", json={"task": task, "budget": 2000}, timeout=timeout)
        answer.raise_for_status()
    return sample.wall


def serving(work: Path, tasks: dict[str, str]) -> dict[str, tuple[float, float, float]]:
    """Per shape: (median ordinary answer alone, slowest ordinary answer during the huge task,
    the huge task's own time)."""
    import httpx

    clone = work / "kbc"
    if not clone.exists():
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        subprocess.run(
            [sys.executable, "-m", "kbc", *LEXICAL, "build", str(clone), "--no-llm"],
            check=True,
            capture_output=True,
        )
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kbc",
            *LEXICAL,
            "serve",
            "--repo",
            str(clone),
            "--transport",
            "http",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(f"{url}/api/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        post(url, ORDINARY)  # warm
        alone = statistics.median(post(url, ORDINARY) for _ in range(15))
        results = {}
        for shape, task in tasks.items():
            during: list[float] = []
            huge: list[float] = []
            worker = threading.Thread(target=lambda t=task, out=huge: out.append(post(url, t)))
            worker.start()
            time.sleep(0.05)
            while worker.is_alive():
                during.append(post(url, ORDINARY))
            worker.join()
            results[shape] = (alone, max(during, default=alone), huge[0] if huge else float("nan"))
        return results
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chars", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--task-chars", type=int, default=100_000)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--update-results", action="store_true")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="kbc-long-"))
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    rows = []
    load = Load()
    for shape, text in shapes(args.chars).items():
        slug = shape.replace(" ", "-")
        long_repo = repository(work / f"{slug}-long", text)
        short_repo = repository(
            work / f"{slug}-short", "\n".join(text[i : i + 100] for i in range(0, len(text), 100))
        )
        samples = interleaved(
            {
                "long": fresh_builds(long_repo, work / f"{slug}-long-store"),
                "short": fresh_builds(short_repo, work / f"{slug}-short-store"),
            },
            args.repeats,
            load,
        )
        long_times, short_times = [s.wall for s in samples["long"]], [s.wall for s in samples["short"]]
        ratio = median(samples["long"]) / median(samples["short"])
        rows.append((shape, median(samples["long"]), median(samples["short"]), ratio))
        print(
            json.dumps({"shape": shape, "long": long_times, "short": short_times, "ratio": round(ratio, 2)}),
            flush=True,
        )
    served = serving(work, shapes(args.task_chars))
    for shape, (alone, during, huge) in served.items():
        print(
            json.dumps(
                {"task": shape, "alone": round(alone, 3), "during": round(during, 3), "huge": round(huge, 3)}
            ),
            flush=True,
        )
    lines = [
        f"kbc at {head}, lexical builds without an LLM. One "
        f"file of {args.chars:,} characters on a single line, against the same characters in 100-character "
        f"lines (plus a five-line Python file), each built cold {args.repeats} times, alternately; "
        "medians:",
        "",
        "| text | one line | short lines | ratio |",
        "| --- | ---: | ---: | ---: |",
        *(f"| {shape} | {long:.2f} s | {short:.2f} s | {ratio:.2f} |" for shape, long, short, ratio in rows),
        "",
        f"`kbc serve --transport http` over a lexical build of kbc itself: an ordinary task asked again "
        f"and again while one task of {args.task_chars:,} characters without a space is asked beside it.",
        "",
        "| huge task | ordinary answer alone (median) | slowest ordinary answer during it | delay | "
        "the huge task's own answer |",
        "| --- | ---: | ---: | ---: | ---: |",
        *(
            f"| {shape} | {alone * 1000:.0f} ms | {during * 1000:.0f} ms | {(during - alone) * 1000:.0f} ms "
            f"| {huge * 1000:.0f} ms |"
            for shape, (alone, during, huge) in served.items()
        ),
    ]
    report(
        "\n".join(lines),
        args.update_results,
        "long-lines",
        "One long line (`benchmarks/long_lines.py`)",
        f"python benchmarks/long_lines.py --chars {args.chars} --repeats {args.repeats} "
        f"--task-chars {args.task_chars}",
        load,
    )


if __name__ == "__main__":
    main()
