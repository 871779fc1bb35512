"""What `kbc build` says while it works, run the way a user runs it: each pass as it starts
(with what it goes through) and as it ends, each stage's summary as soon as the stage ends;
off a terminal as plain lines, with --format json as JSON events on stderr while stdout holds
the one JSON document."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result
from helpers import LEXICAL, RepoFactory

from kbc.cli.main import cli

FILES = {
    "shop/__init__.py": '"""A small shop: carts and refunds."""\n',
    "shop/cart.py": '"""Carts."""\n\n\nclass Cart:\n    def add(self, sku):\n        return sku\n',
    "shop/refunds.py": '"""Refunds."""\n\n\ndef refund(order):\n    return order\n',
    "docs/guide.md": "# Guide\n\nHow carts and refunds work.\n",
}
# every pass of a build without embeddings, in order (the summary's `passes`)
PASSES = [
    "discover",
    "secrets",
    "analyze",
    "graph",
    "store facts",
    "views",
    "load embedder",
    "chunk",
    "lexical index",
    "publish",
]


def build(root: Path, *extra: str) -> Result:
    result = CliRunner().invoke(
        cli, [*LEXICAL, "build", str(root), "--no-llm", "--workers", "1", *extra], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return result


def test_each_pass_says_when_it_starts_and_ends_and_each_summary_comes_when_its_stage_ends(
    make_repo: RepoFactory,
) -> None:
    lines = build(make_repo(FILES)).output.splitlines()  # stderr and stdout, as a person sees them
    shown = "\n".join(lines)
    assert not any("\r" in line for line in lines), "off a terminal, plain lines"

    def first(found: list[int], what: str) -> int:
        assert found, f"no {what} in:\n{shown}"
        return found[0]

    def start(name: str) -> int:
        return first(
            [i for i, line in enumerate(lines) if line.startswith(name) and line.endswith("…")],
            f"start of {name}",
        )

    def end(name: str) -> int:
        return first(
            [i for i, line in enumerate(lines) if line.startswith(f"{name}: ") and line.endswith(" s")],
            f"end of {name}",
        )

    def block(title: str) -> int:
        return first([i for i, line in enumerate(lines) if line.startswith(title)], title)

    order = [at for name in PASSES for at in (start(name), end(name))]
    assert order == sorted(order), f"a pass starts, ends, then the next starts:\n{shown}"
    # what each counted pass goes through is said as it starts
    for announced in ("secrets: 4 files…", "analyze: 3 files…", "chunk: 4 files…"):
        assert announced in lines, shown
    # each summary as soon as its stage is over, before the next stage starts
    assert end("store facts") < block("kbc analyze:") < start("views")
    assert end("views") < block("kbc views:") < start("load embedder")
    assert end("lexical index") < block("kbc index:") < start("publish")
    assert end("publish") < block("kbc build:")


def test_with_format_json_passes_are_json_events_on_stderr_and_stdout_is_one_document(
    make_repo: RepoFactory,
) -> None:
    result = build(make_repo(FILES), "--format", "json")
    document = json.loads(result.stdout)
    events = [json.loads(line) for line in result.stderr.splitlines()]
    assert events, "events on stderr"
    assert {e["kind"] for e in events} <= {"start", "progress", "done", "summary"}
    assert [p["name"] for p in document["passes"]] == PASSES
    said = [(e["kind"], e["pass"]) for e in events]
    assert [s for s in said if s[0] in ("start", "done")] == [
        (k, p) for p in PASSES for k in ("start", "done")
    ]
    # each stage's summary as it ends, the same as the document's
    assert said.index(("summary", "analyze")) == said.index(("done", "store facts")) + 1
    assert said.index(("summary", "views")) == said.index(("done", "views")) + 1
    assert (
        said.index(("done", "lexical index"))
        < said.index(("summary", "index"))
        < said.index(("start", "publish"))
    )
    summaries = {e["pass"]: e["summary"] for e in events if e["kind"] == "summary"}
    assert list(summaries) == ["analyze", "views", "index"]
    assert all(summaries[stage] == document[stage] for stage in summaries)
    secrets = next(e for e in events if e == {**e, "kind": "start", "pass": "secrets"})
    assert (secrets["total"], secrets["unit"], secrets["done"]) == (4, "files", 0)
    done = next(e for e in events if e == {**e, "kind": "done", "pass": "analyze"})
    assert (done["total"], done["done"]) == (3, 3) and done["seconds"] >= 0
