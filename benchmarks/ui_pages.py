"""The UI's pages on a real repository: how long each takes to render, and screenshots of them.

Serves the repository (default: this one, built first if it has no store) with
``kbc serve --transport http`` and opens each main page in headless Chromium (Debian's
package, driven by Playwright). For each page it reports the server's time to answer (the
median of five requests after one warm-up, read from the client) and the time until the
page has loaded and its diagrams are drawn, each page in a fresh browser context (an empty
cache: the first visit's cost). With ``--screenshots DIR`` it saves a PNG of
each page at 1280×800, and of the slice builder at a phone's 390×844.

    python benchmarks/ui_pages.py [--repo PATH] [--screenshots docs/ui] [--pages a,b] [--prefix P]

``--pages`` keeps the pages named (``architecture,module-graph`` on any repository: the
others ask about kbc's own code), ``--prefix`` goes before each screenshot's file name.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from timing import clock

HERE = Path(__file__).resolve().parent
TASK = "how does retrieval stay within the token budget?"
PAGES = (
    ("overview", "/"),
    ("architecture", "/view/architecture"),
    ("module-graph", "/graph"),
    ("module", "/view/module:kbc.retrieval"),
    ("workflow", "/views?kind=workflow"),
    ("symbol", "/symbol?name=Retriever.retrieve"),
    ("source", "/source/kbc/retrieval/pack.py?start=150&end=186"),
    ("search", "/search?q=token+budget"),
    ("slice-builder", "/slice?task=" + urllib.request.quote(TASK) + "&budget=3000"),
    ("ask", "/ask?q=" + urllib.request.quote("how are views grounded in the facts?")),
    ("gaps", "/gaps"),
    ("drift", "/drift"),
)
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fetch_seconds(url: str) -> float:
    with clock() as sample, urllib.request.urlopen(url, timeout=60) as reply:
        reply.read()
        if reply.status != 200:
            raise SystemExit(f"{url}: HTTP {reply.status}")
    return sample.wall


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=HERE.parent)
    parser.add_argument("--screenshots", type=Path, help="folder to save the pages' PNGs in")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "")
    parser.add_argument("--pages", help="only these pages, comma-separated (e.g. architecture,module-graph)")
    parser.add_argument("--prefix", default="", help="before each screenshot's name (e.g. rich-)")
    args = parser.parse_args()
    pages = tuple(p for p in PAGES if not args.pages or p[0] in args.pages.split(","))
    if not args.chromium:
        raise SystemExit("no Chromium: apt-get install chromium (or give --chromium PATH)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KBC_")}
    kbc = [sys.executable, "-m", "kbc"]
    if subprocess.run([*kbc, "status", "--repo", str(args.repo)], env=env, capture_output=True).returncode:
        subprocess.run([*kbc, "build", str(args.repo)], env=env, check=True, capture_output=True)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [*kbc, "serve", "--transport", "http", "--repo", str(args.repo), "--port", str(port)],
        env=env,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                fetch_seconds(base + "/api/v1/health")
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("the server did not start") from None
                time.sleep(0.2)
        rows = []
        for name, path in pages:
            fetch_seconds(base + path)  # warm: the first ask or slice of a process opens the index
            rows.append((name, path, statistics.median(fetch_seconds(base + path) for _ in range(5))))
        loaded = _browse(base, args.chromium, args.screenshots, pages, args.prefix)
    finally:
        server.terminate()
        server.wait(timeout=30)
    commit = subprocess.run(
        ["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    print(f"UI pages on {args.repo.resolve().name} (commit {commit}, {os.cpu_count()} cores):\n")
    print("| page | path | server ms (median of 5) | loaded and drawn in the browser, empty cache, ms |")
    print("| --- | --- | ---: | ---: |")
    for name, path, seconds in rows:
        shown = path if len(path) < 60 else path[:57] + "…"
        print(f"| {name} | `{shown}` | {seconds * 1000:.0f} | {loaded[name] * 1000:.0f} |")
    slowest = max(rows, key=lambda row: row[2])
    print(f"\nSlowest server answer: {slowest[0]}, {slowest[2] * 1000:.0f} ms.")


def _browse(
    base: str,
    chromium: str,
    folder: Path | None,
    pages: tuple[tuple[str, str], ...] = PAGES,
    prefix: str = "",
) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    loaded: dict[str, float] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=ARGS)
        for name, path in pages:
            # A context of its own: an empty cache, so every script and style is fetched
            # and compiled again (the worst case: a newcomer's first visit).
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            with clock() as loading:
                page.goto(base + path)
                if page.locator("pre.mermaid").count():
                    page.wait_for_selector("body[data-diagrams]", timeout=60_000)
            loaded[name] = loading.wall
            if folder is not None:
                if name == "architecture":  # its diagram sits below the tables
                    page.locator("pre.mermaid").first.scroll_into_view_if_needed()
                page.screenshot(path=str(folder / f"{prefix}{name}.png"))
            context.close()
        if folder is not None and "slice-builder" in dict(pages):
            phone = browser.new_page(viewport={"width": 390, "height": 844})
            phone.goto(base + dict(PAGES)["slice-builder"])
            phone.screenshot(path=str(folder / f"{prefix}slice-builder-phone.png"))
        browser.close()
    return loaded


if __name__ == "__main__":
    main()
