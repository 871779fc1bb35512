"""`kbc eval`: retrieval quality on a golden file or on the repository's own history."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kbc.cli.common import knowledge_base, say, settings_for
from kbc.domain.errors import KbcError

if TYPE_CHECKING:
    from kbc.eval.metrics import Summary
    from kbc.services.evaluate import EvalReport


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
    from kbc.services.evaluate_history import evaluate_history

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
        with knowledge_base(repo, store, facts=True) as kb:
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


def render_report(report: EvalReport, misses: int = 10) -> str:
    """The report as a table, with the questions kbc missed in its top ten."""
    from kbc.eval.metrics import BUDGETS
    from kbc.services.evaluate import SYSTEMS, TITLES

    if report.mode == "golden":
        head = f"kbc eval: {len(report.results)} questions from {report.source}"
    else:
        history = report.history
        skipped = ", ".join(f"{reason} {n}" for reason, n in history.get("skipped", {}).items())
        head = (
            f"kbc eval: the last {len(report.results)} qualifying commits of {report.source} "
            f"({history.get('scanned', 0)} scanned" + (f"; skipped {skipped}" if skipped else "") + ")"
        )
    lines = [head, f"retrieval: {report.retrieval or 'none'} · {report.seconds:.1f} s"]
    if report.mode == "history":
        refreshes = ", ".join(f"{n} {p}" for p, n in report.history.get("refresh", {}).items())
        lines.append(f"stores built at each commit's parent: {refreshes}")
    lines.append("")
    header = (
        "use case",
        "system",
        "questions",
        "Recall@5",
        "Recall@10",
        "MRR",
        "Budget recall",
        "HunkAll@budget",
        "To gold (median)",
    )
    rows: list[tuple[str, ...]] = [header]
    cases = list(report.summaries("kbc"))
    for case in cases:
        for system in SYSTEMS:
            s = report.summaries(system)[case]
            rows.append(
                (
                    case,
                    TITLES[system],
                    str(s.questions),
                    f"{s.recall_at_5:.3f}",
                    f"{s.recall_at_10:.3f}",
                    f"{s.mrr:.3f}",
                    f"{s.budget_recall:.3f}",
                    *_line_cells(s),
                )
            )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for index, row in enumerate(rows):
        cells = [cell.ljust(widths[i]) if i < 2 else cell.rjust(widths[i]) for i, cell in enumerate(row)]
        lines.append("  ".join(cells).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    if report.summaries("kbc")["overall"].hunk_questions:
        lines += [
            "",
            f"HunkAll@budget and to gold: over the questions with line ranges (how many, in "
            f"brackets, when not all); budgets tried: {BUDGETS[0]:,} to {BUDGETS[-1]:,} tokens.",
        ]
    missed = [r for r in report.results if r.scores["kbc"].recall_at_10 < 1.0]
    if missed and misses > 0:
        lines += [
            "",
            f"gold files kbc did not rank in its top 10 ({len(missed)} "
            f"question{'s' if len(missed) != 1 else ''}):",
        ]
        for result in missed[:misses]:
            wanted = ", ".join(p for p in result.gold if p not in result.top["kbc"])
            got = ", ".join(result.top["kbc"][:3]) or "nothing"
            lines.append(f"  {result.label[:80]}: wanted {wanted}; ranked first {got}")
        if len(missed) > misses:
            lines.append(f"  … and {len(missed) - misses} more (--format json lists every question)")
    return "\n".join(lines) + "\n"


def _line_cells(summary: Summary) -> tuple[str, str]:
    """The HunkAll and tokens-to-gold cells: "-" when no question has line ranges."""
    if summary.hunk_all is None or summary.tokens_to_gold_median is None:
        return "-", "-"
    hunks = f"{summary.hunk_all:.3f}"
    if summary.hunk_questions != summary.questions:
        hunks += f" ({summary.hunk_questions})"
    import math

    median = summary.tokens_to_gold_median
    to_gold = "never" if math.isinf(median) else f"{median:,.0f}"
    if summary.tokens_to_gold_never:
        to_gold += f" ({summary.tokens_to_gold_never} never)"
    return hunks, to_gold
