"""A build killed at a random moment: what readers see meanwhile, and what refresh repairs.

    python benchmarks/kill_round.py [--rounds 10] [--files 300] [--seed 20261204] [--work DIR]
        [--lexical] [--update-results]

On a clone of this repository's HEAD, built cold with the default settings (embeddings
with the packaged model, no LLM): one uncommitted edit that moves every line (a line
prepended) to ``--files`` tracked files (Python first, then Markdown, TOML, YAML, text),
``kbc build`` started and killed with SIGKILL at a moment drawn uniformly from the duration
of the same build run to its end (measured first), the edits reverted, then ``kbc refresh``.
A round passes when

- while the killed build's leftovers are there, the store's live parts (the facts'
  generation, the lexical index's chunks, the views, the vector snapshot) and the slices of
  15 questions of ``benchmarks/golden/kbc.yaml`` equal, byte for byte, the cold build's, or
  the killed build's own when it had published before the kill came: one build or the other,
  never a mix;
- after the refresh, they still do, nothing the killed build left remains (its journal, its
  staged index and views, unpublished generations), and the vector store holds exactly the
  units of the index.

The pass running at the kill is read from the un-killed build's own pass timings.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from results_file import report
from timing import Load, clock, timed

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = 15
MARK = "# a line that moves every other line of this file\n"
EDITED = (".py", ".md", ".toml", ".yaml", ".yml", ".txt", ".cfg")  # where MARK is a comment or a heading


def run(*args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), cwd=cwd, check=check, capture_output=True, text=True)


def kbc(lexical: bool) -> list[str]:
    return [sys.executable, "-m", "kbc", *(["-c", "index.embed_model=none"] if lexical else [])]


def questions() -> list[str]:
    import yaml

    data = yaml.safe_load((ROOT / "benchmarks" / "golden" / "kbc.yaml").read_text(encoding="utf-8"))
    return [q["question"] for q in data["questions"][:QUESTIONS]]


def slices(repo: Path, lexical: bool, asked: list[str]) -> list[str]:
    return [run(*kbc(lexical), "retrieve", "--repo", str(repo), "--format", "json", q).stdout for q in asked]


def live_parts(repo: Path) -> dict[str, Any]:
    """What a reader of the store reads, each part by digest."""
    from kbc.index.lexical import LexicalIndex

    store = repo / ".kbc"
    current = (store / "CURRENT").read_text().strip()
    lexical = LexicalIndex(store / "index" / "lexical.sqlite")
    try:
        chunks = hashlib.sha256("\n".join(sorted(lexical.chunk_ids())).encode()).hexdigest()[:16]
        vectors = lexical.meta("vectors")
    finally:
        lexical.close()
    views = hashlib.sha256((store / "views" / "views.jsonl").read_bytes()).hexdigest()[:16]
    facts = hashlib.sha256((store / current / "facts.jsonl").read_bytes()).hexdigest()[:16]
    return {"generation": current, "facts": facts, "chunks": chunks, "views": views, "vectors": vectors}


def leftovers(repo: Path) -> list[str]:
    """What a build leaves beside the live store while it runs."""
    store = repo / ".kbc"
    current = (store / "CURRENT").read_text().strip()
    found = [p.name for p in store.glob("gen-*") if p.name != current]
    found += [p.name for p in store.glob("tmp-*")]
    found += [p.name for p in (store / "index").glob("lexical.next.sqlite*")]
    found += [p.name for p in (store / "views").glob("views.next.*")]
    if (store / "building.json").exists():
        found.append("building.json")
    return sorted(found)


def vectors_exact(repo: Path, lexical: bool) -> bool:
    """The vector store holds exactly the units of the published index's snapshot."""
    if lexical:
        return True
    from kbc.index.embed import load_embedder, model_name
    from kbc.index.exact import load_snapshot
    from kbc.index.lexical import LexicalIndex
    from kbc.index.vectors import open_vector_store

    index = repo / ".kbc" / "index"
    lexical_index = LexicalIndex(index / "lexical.sqlite")
    try:
        digest = lexical_index.meta("vectors")
    finally:
        lexical_index.close()
    snapshot = load_snapshot(index, digest)
    embedder = load_embedder(model_name())
    store = open_vector_store(index, str(repo.resolve()), embedder, embedder_name=model_name())
    return snapshot is not None and set(snapshot.units) == store.ids()


def edit(repo: Path, files: list[str]) -> None:
    for path in files:
        target = repo / path
        target.write_text(MARK + target.read_text(encoding="utf-8"), encoding="utf-8")


def pass_at(passes: list[dict[str, Any]], moment: float, started: float) -> str:
    """The pass of the un-killed build running ``moment`` seconds in (startup before the
    first pass counts as "start")."""
    clock = started
    if moment < clock:
        return "start"
    for item in passes:
        clock += float(item["seconds"])
        if moment < clock:
            return str(item["name"])
    return "publish"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--seed", type=int, default=20261204)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--lexical", action="store_true", help="no embeddings")
    parser.add_argument("--update-results", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    work = args.work or Path(tempfile.mkdtemp(prefix="kbc-kill-"))
    repo = work / "kbc"
    if not repo.exists():
        run("git", "clone", "-q", str(ROOT), str(repo))
    head = run("git", "rev-parse", "--short", "HEAD", cwd=repo).stdout.strip()
    tracked = run("git", "ls-files", *(f"*{suffix}" for suffix in EDITED), cwd=repo).stdout.split()
    files = sorted(tracked, key=lambda path: (not path.endswith(".py"), path))[: args.files]
    asked = questions()

    cold_seconds = timed(lambda: run(*kbc(args.lexical), "build", str(repo), "--no-llm", "--wait")).wall
    reference, answers = live_parts(repo), slices(repo, args.lexical, asked)

    edit(repo, files)
    with clock() as building:
        built = run(*kbc(args.lexical), "build", str(repo), "--no-llm", "--wait", "--format", "json")
    whole = building.wall
    passes = json.loads(built.stdout)["passes"]
    startup = max(0.0, whole - sum(float(p["seconds"]) for p in passes))
    edited, edited_answers = live_parts(repo), slices(repo, args.lexical, asked)  # the next build, whole
    run("git", "checkout", "-q", "--", ".", cwd=repo)
    run(*kbc(args.lexical), "refresh", str(repo), "--no-llm")
    assert live_parts(repo) == reference, "a refresh after a whole build did not return to the cold build"

    rng = random.Random(args.seed)
    rows: list[dict[str, Any]] = []
    finished_first = 0  # builds that ended before their kill moment (the machine ran faster)
    load = Load()  # the kill moments are drawn from one build's time: the load says how it compares
    load.read()
    while len(rows) < args.rounds:
        edit(repo, files)
        moment = rng.uniform(0.0, whole)
        process = subprocess.Popen(
            [*kbc(args.lexical), "build", str(repo), "--no-llm", "--wait"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            process.wait(timeout=moment)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        else:
            finished_first += 1
            run("git", "checkout", "-q", "--", ".", cwd=repo)
            run(*kbc(args.lexical), "refresh", str(repo), "--no-llm")
            continue
        left = leftovers(repo)
        # Whole: the last build's store, or (a kill after it published) the killed build's own.
        seen = live_parts(repo), slices(repo, args.lexical, asked)
        readers = seen in ((reference, answers), (edited, edited_answers))
        published = seen == (edited, edited_answers)
        run("git", "checkout", "-q", "--", ".", cwd=repo)
        refreshed = json.loads(run(*kbc(args.lexical), "refresh", str(repo), "--no-llm", "--ci").stdout)
        repaired = (
            live_parts(repo) == reference
            and not leftovers(repo)
            and slices(repo, args.lexical, asked) == answers
            and vectors_exact(repo, args.lexical)
        )
        row = {
            "round": len(rows) + 1,
            "kill_at": round(moment, 1),
            "pass": pass_at(passes, moment, startup),
            "left": len(left),
            "readers_whole": readers,
            "published": published,
            "refresh": refreshed["path"],
            "repaired": repaired,
            "ok": readers and repaired,
        }
        rows.append(row)
        load.read()
        print(json.dumps(row), flush=True)

    passed = sum(1 for r in rows if r["ok"])
    mode = "lexical" if args.lexical else "hybrid (packaged MiniLM)"
    yes = {True: "yes", False: "NO"}
    lines = [
        f"kbc at {head}, {mode}, no LLM. A clone of kbc "
        f"built cold ({cold_seconds:.0f} s); each round prepends a line to {len(files)} tracked files "
        f"(uncommitted), kills `kbc build` with SIGKILL at a moment drawn from the {whole:.0f} s "
        "the same build takes to its end, reverts the edits and runs `kbc refresh`. Readers whole: "
        "the facts' generation, the lexical index's chunks, the views, the vector snapshot and the "
        f"slices of {QUESTIONS} golden questions equal, byte for byte, either the cold build's or (when "
        "the kill came after the killed build had published) that build's own, never a mix. "
        "Repaired: after the refresh they equal the cold build's, nothing is left, and the vector "
        "store holds exactly the index's units.",
        "",
        "| round | killed at | pass running | left beside the store | readers whole | readers see | refresh "
        "| repaired |",
        "| ---: | ---: | --- | ---: | --- | --- | --- | --- |",
        *(
            f"| {r['round']} | {r['kill_at']} s | {r['pass']} | {r['left']} | {yes[r['readers_whole']]} "
            f"| {'the killed build (published)' if r['published'] else 'the last build'} "
            f"| {r['refresh']} | {yes[r['repaired']]} |"
            for r in rows
        ),
        "",
        f"{passed} of {len(rows)} rounds passed ({finished_first} further builds ended before their "
        "kill moment and are not counted).",
    ]
    text = "\n".join(lines)
    command = (
        f"python benchmarks/kill_round.py --rounds {args.rounds} --files {args.files} "
        f"--seed {args.seed}{' --lexical' if args.lexical else ''}"
    )
    report(
        text,
        args.update_results,
        "kill-round",
        "A build killed at random moments (`benchmarks/kill_round.py`)",
        command,
        load,
    )
    if passed != len(rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
