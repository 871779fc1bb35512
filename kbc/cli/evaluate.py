"""`kbc eval`: retrieval quality on a golden file or on the repository's own history."""

from __future__ import annotations

import json
from pathlib import Path

import click

from kbc.cli.common import knowledge_base, say, settings_for
from kbc.domain.errors import KbcError


@click.command(name="eval")
@click.option(
    "--golden",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Golden file (YAML or JSONL) of questions and the paths that answer them.",
)
@click.option(
    "--history",
    type=int,
    metavar="N",
    help="Mine the last N qualifying commits instead: each message asked of a store built at its parent.",
)
@click.option(
    "--repo",
    "repo",
    type=click.Path(file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="The repository.",
)
@click.option(
    "--store",
    "store",
    type=click.Path(file_okay=False, path_type=Path),
    help="Store folder for --golden (default: <repo>/.kbc).",
)
@click.option(
    "--use-case",
    "use_cases",
    multiple=True,
    metavar="NAME",
    help="Only the golden questions of this use case (repeatable).",
)
@click.option(
    "--max-files",
    type=int,
    default=20,
    show_default=True,
    help="With --history: skip commits that changed more source files than this.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def eval_command(
    ctx: click.Context,
    golden: Path | None,
    history: int | None,
    repo: Path,
    store: Path | None,
    use_cases: tuple[str, ...],
    max_files: int,
    fmt: str,
) -> None:
    """Measure retrieval against known answers: Recall@5, Recall@10, MRR and budget recall,
    for kbc and for BM25 over whole files on the same questions.

    With --golden, every question of the file is asked of the store built for the
    repository (`kbc build` first), scored per use case and overall. With
    --history N, the last N non-merge commits that changed existing source files
    (release, formatting, huge and source-less commits skipped) are questions: the
    message is the query and the source files the commit changed are the answer,
    asked of a store built at the commit's parent in a temporary clone, refreshed
    incrementally from one parent to the next.

    Where the answer names lines (the lines each commit changed; `lines` or
    `symbols` in a golden file), HunkAll says whether the slice holds all of them
    at the use case's budget, and tokens to gold the smallest budget (1,000 to
    27,000 tokens) at which it does. See docs/eval.md.
    """
    from kbc.services.evaluate import evaluate_history, render_report

    if (golden is None) == (history is None):
        raise KbcError(
            "give either --golden FILE or --history N",
            hint="kbc eval --golden benchmarks/golden/kbc.yaml, or kbc eval --history 30",
        )
    if history is not None and use_cases:
        raise KbcError("--use-case applies to --golden; --history asks in the implementation use case")
    if max_files < 1:
        raise KbcError(f"--max-files {max_files}: give 1 or more")
    if golden is not None:
        with knowledge_base(repo, store) as kb:
            report = kb.evaluate(golden, use_cases)
    else:
        assert history is not None
        report = evaluate_history(
            repo, history, settings_for(repo), max_files=max_files, progress=None if fmt == "json" else say
        )
    if fmt == "json":
        click.echo(json.dumps(report.as_data(), indent=1, ensure_ascii=False))
    else:
        click.echo(render_report(report), nl=False)
