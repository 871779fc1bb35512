"""The ``kbc`` command line. Heavy modules are imported inside commands, so
``kbc --help`` stays instant."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from kbc import __version__
from kbc.cli.common import KbcGroup, build_options, knowledge_base, reading_options, unexpected
from kbc.domain.errors import exit_codes_text

if TYPE_CHECKING:
    from kbc.domain.progress import PassEvent
    from kbc.index.build import IndexSummary
    from kbc.services.analyze import AnalyzeSummary
    from kbc.services.build import KnowledgeSummary
    from kbc.views.build import ViewsSummary

F = TypeVar("F", bound=Callable[..., Any])


def _render_summary(summary: AnalyzeSummary) -> str:
    skipped = ", ".join(f"{reason} {n}" for reason, n in summary.skipped_by_reason.items())
    lines = [
        f"kbc analyze: {summary.root}",
        f"  files         {summary.files} text files; {summary.python_files} Python "
        f"({summary.parsed} parsed, {summary.cached} from cache)",
        f"  symbols       {summary.symbols}",
        f"  edges         {summary.import_edges} import, {summary.call_edges} call",
        f"  entry points  {summary.entry_points}",
        f"  integrations  {summary.integrations} in the product's code"
        + (
            f" ({summary.integrations_elsewhere} uses in tests, examples and vendored code)"
            if summary.integrations_elsewhere
            else ""
        ),
        f"  skipped       {summary.skipped}"
        + (f" ({skipped})" if skipped else "")
        + f"; ignored {summary.ignored}",
        f"  errors        {summary.failed}",
    ]
    for failure in summary.failures[:20]:
        where = f"{failure.path}:{failure.line}:{failure.column}" if failure.line else failure.path
        lines.append(f"    {where}: {failure.error}")
    if summary.failed > 20:
        lines.append(f"    … and {summary.failed - 20} more (see problems.json in the store)")
    if summary.warnings:
        lines.append(f"  warnings      {len(summary.warnings)}")
        lines.extend(f"    {w}" for w in summary.warnings[:10])
    lines.append(f"  time          {summary.seconds:.2f} s")
    lines.append(f"  store         {summary.store}")
    return "\n".join(lines)


@click.group(cls=KbcGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=exit_codes_text())
@click.version_option(__version__, prog_name="kbc")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of short error messages.")
@click.option(
    "-c",
    "assignments",
    multiple=True,
    metavar="SECTION.KEY=VALUE",
    help="Set a setting for this run, above the environment and every configuration "
    "file (e.g. -c index.embed_model=none); repeatable.",
)
@click.pass_context
def cli(ctx: click.Context, debug: bool, assignments: tuple[str, ...]) -> None:
    """kbc compiles a repository into a knowledge base for coding agents."""
    ctx.obj = {"debug": debug, "assignments": assignments}


@cli.command()
@build_options
@click.option("--max-file-bytes", type=int, help="Skip files larger than this.")
@click.pass_context
def analyze(
    ctx: click.Context,
    path: Path,
    store: Path | None,
    fmt: str,
    workers: int | None,
    max_file_bytes: int | None,
) -> None:
    """Extract static facts and graphs from the repository at PATH.

    Discovers tracked text files, analyzes every Python file with libcst
    (cached by content), builds the import and call graphs and writes the
    store that later passes read. Progress goes to stderr, as `kbc build`'s.
    """
    from dataclasses import asdict

    from kbc.cli.progress import progress_on_stderr

    with (
        knowledge_base(path, store, workers=workers, max_file_bytes=max_file_bytes) as kb,
        progress_on_stderr(fmt, _render_stage) as progress,
    ):
        summary = kb.analyze(progress=progress)
    if fmt == "json":
        click.echo(json.dumps(asdict(summary), indent=1, sort_keys=True))
    else:
        click.echo(_render_summary(summary))


@cli.command()
@click.argument("name")
@reading_options
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def symbols(ctx: click.Context, name: str, repo: Path, store: Path | None, fmt: str) -> None:
    """Show where NAME is defined (path:start-end), its callers and its callees.

    NAME is a qualified name (pkg.mod.Class.method), a dotted suffix
    (Class.method) or a bare name.
    """
    from kbc.services.payloads import symbols_data

    with knowledge_base(repo, store, facts=True) as kb:
        reports = kb.reads.symbol(name)
    if not reports:
        click.echo(f"no symbol named {name!r}; try a shorter or a qualified name", err=True)
        sys.exit(1)
    if fmt == "json":
        click.echo(json.dumps(symbols_data(reports), indent=1, sort_keys=True))
        return
    blocks = []
    for report in reports:
        symbol = report.symbol
        lines = [f"{symbol.qname}  {symbol.kind}  {report.location}"]
        head = symbol.head()
        decorators = "".join(f"@{d} " for d in symbol.decorators)
        lines.append(f"  {decorators}{head}")
        if symbol.doc:
            lines.append(f"  {symbol.doc}")
        for title, links in (("callers", report.callers), ("callees", report.callees)):
            lines.append(f"  {title} ({len(links)}):")
            for link in links:
                sites = ",".join(str(n) for n in link.lines)
                lines.append(f"    {link.qname}  {link.location}  (calls at {link.call_path}:{sites})")
        blocks.append("\n".join(lines))
    click.echo("\n\n".join(blocks))


def _render_views_summary(summary: ViewsSummary) -> str:
    kinds = ", ".join(f"{kind} {n}" for kind, n in summary.by_kind.items())
    sources = ", ".join(f"{source} {n}" for source, n in summary.by_source.items())
    lines = ["kbc views:", f"  views         {summary.views} ({kinds})", f"  prose         {sources}"]
    if summary.model:
        lines.append(
            f"  llm           {summary.model}: {summary.llm_calls} calls, {summary.cached} cached, "
            f"{summary.repaired} repaired, {summary.failed} failed"
        )
        lines.append(
            f"  tokens        {summary.prompt_tokens} in, {summary.completion_tokens} out, "
            f"cost ${summary.cost:.4f}"
        )
        lines.append(f"  grounding     {summary.ungrounded} ungrounded statements removed")
    else:
        lines.append("  llm           none (set KBC_LLM_MODEL to have an LLM write the prose)")
    for error in summary.errors[:10]:
        lines.append(f"    {error}")
    if len(summary.errors) > 10:
        lines.append(f"    … and {len(summary.errors) - 10} more")
    return "\n".join(lines)


def _render_knowledge(known: KnowledgeSummary) -> list[str]:
    if not known.roots and not known.problems:
        return []
    lines = [
        "kbc knowledge:",
        f"  documents     {known.documents} from {known.roots} root{'s' if known.roots != 1 else ''}, "
        f"{known.scopes} scope{'s' if known.scopes != 1 else ''} (`kbc scopes`)",
    ]
    lines.extend(f"  not read      {problem}" for problem in known.problems)
    return lines


def _render_index(index: IndexSummary) -> str:
    retrieval = index.retrieval + (f" ({index.note})" if index.note else "")
    return "\n".join(
        [
            "kbc index:",
            f"  chunks        {index.chunks} from {index.files} files "
            f"({index.changed_files} changed, {index.removed_files} removed)",
            f"  embeddings    {index.units} units, {index.embedded} embedded now, "
            f"{index.removed_units} retired" + (f"; {index.pending} left to embed" if index.pending else ""),
            f"  secrets       {index.secrets} redacted",
            f"  retrieval     {retrieval}",
            f"  time          {index.seconds:.2f} s",
        ]
    )


def _render_stage(event: PassEvent) -> str:
    """A stage's summary, printed as soon as the stage ends."""
    from kbc.index.build import IndexSummary
    from kbc.services.analyze import AnalyzeSummary
    from kbc.services.build import KnowledgeSummary
    from kbc.views.build import ViewsSummary

    result = event.result
    if isinstance(result, AnalyzeSummary):
        return _render_summary(result)
    if isinstance(result, ViewsSummary):
        return _render_views_summary(result)
    if isinstance(result, KnowledgeSummary):
        return "\n".join(_render_knowledge(result))
    return _render_index(result) if isinstance(result, IndexSummary) else ""


def _render_pending(pending: int, filling: int, later: str = "") -> list[str]:
    if later:
        left = "the facts, views and team knowledge, then the vectors,"
        if filling < 0:
            return [f"  first index   {left} not read (no process could be started): run `kbc embed`"]
        return [
            f"  first index   {left} left to a background process (pid {filling}): "
            "`kbc status` follows it, `kbc embed` finishes it now"
        ]
    if not pending:
        return []
    if filling < 0:
        return [
            f"  embedding     {pending} not embedded (no process could be started for them): run `kbc embed`"
        ]
    return [
        f"  embedding     {pending} left to a background process (pid {filling}): `kbc status` follows it, "
        "`kbc embed` finishes it now"
    ]


@cli.command()
@build_options
@click.option(
    "--no-llm", is_flag=True, help="Never call an LLM: the views' prose comes from docstrings only."
)
@click.option(
    "--knowledge",
    "knowledge",
    multiple=True,
    metavar="[NAME=]PATH|URL",
    help="A knowledge root to index beside the code (repeatable; adds to [[knowledge]]).",
)
@click.option(
    "--wait/--no-wait",
    "wait",
    default=None,
    help="Embed every unit before returning (--wait), or leave any to a background "
    "process (--no-wait); default: wait for at most index.wait_units units.",
)
@click.pass_context
def build(
    ctx: click.Context,
    path: Path,
    store: Path | None,
    fmt: str,
    workers: int | None,
    no_llm: bool,
    knowledge: tuple[str, ...],
    wait: bool | None,
) -> None:
    """Run every pass on the repository at PATH: facts, graphs, views, then the index.

    Views (architecture, modules, features, workflows, entry points, domain
    concepts, business rules, integrations) take their facts from the code;
    their prose comes from the LLM named by KBC_LLM_MODEL (cached by facts), or
    from docstrings without one. The index holds every tracked text file and
    the views (secrets redacted), parsed code cut at its definitions and other
    text in line windows, in a lexical index and, when the embedding model
    loads, as local embeddings in Chroma. Re-running re-does only what changed.
    With more units to embed than index.wait_units (500 by default, about 5 s
    on two cores), the index is published lexical at once and a background
    process embeds them (`kbc status` shows how far it has come; `kbc embed`
    finishes in the foreground); retrieval turns hybrid when they are all in.
    A first build of a repository with more Python files than
    index.first_files (200) publishes a first index before the facts pass,
    Python cut at the definitions CPython's parser reads, and leaves the
    facts, views and team knowledge to that process too (docs/index.md).
    Knowledge roots (a folder or a git repository of Markdown: [[knowledge]] in
    kbc.toml, KBC_KNOWLEDGE, --knowledge) are indexed beside the code, each
    document in its scopes (docs/knowledge.md).

    Progress goes to stderr: each pass as it starts (with the files, views or
    units it goes through), how far it has come at most every 2 s (on a
    terminal, one line rewritten in place), the time left once it has done a
    tenth of its items over 5 s from its first, and its end; each stage's
    summary (analyze, views, knowledge, index) is printed on stdout as soon as
    the stage ends. With --format json, stderr has one JSON event a line
    ({"kind": "start"|"progress"|"done"|"summary", "pass": NAME, ...}) and
    stdout the one JSON document.
    """
    from dataclasses import asdict

    from kbc.cli.progress import progress_on_stderr

    with (
        knowledge_base(path, store, workers=workers, knowledge=knowledge or None) as kb,
        progress_on_stderr(fmt, _render_stage) as progress,
    ):
        summary = kb.build(no_llm=no_llm, progress=progress, wait=wait)
    if fmt == "json":
        click.echo(json.dumps(asdict(summary), indent=1, sort_keys=True))
        return
    click.echo(
        "\n".join(
            [
                "kbc build:",
                f"  passes        {', '.join(f'{p.name} {p.seconds:.1f} s' for p in summary.passes)}",
                f"  peak memory   {max((p.peak_rss_mb for p in summary.passes), default=0)} MB",
                *_render_pending(summary.index.pending, summary.filling, summary.later),
            ]
        )
    )


@cli.command()
@click.argument("text")
@reading_options
@click.option(
    "--use-case",
    "use_case",
    default="implementation",
    show_default=True,
    help="Profile: implementation, task-breakdown, story-breakdown, architecture, review, qa.",
)
@click.option("--budget", type=int, help="Token budget (default: the profile's).")
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    help="A knowledge scope the slice may hold (repeatable; default: all but projects/...).",
)
@click.option(
    "--min-confidence",
    "min_confidence",
    type=click.FloatRange(0, 1),
    default=None,
    help="Pack nothing (but pointers) when the slice's confidence is below this; default: when "
    "its relevance is below the floor (retrieval.confidence_floor); 0: always pack.",
)
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True)
@click.pass_context
def retrieve(
    ctx: click.Context,
    text: str,
    repo: Path,
    store: Path | None,
    use_case: str,
    budget: int | None,
    scopes: tuple[str, ...],
    min_confidence: float | None,
    fmt: str,
) -> None:
    """Print the slice of the repository that TEXT needs, within a token budget.

    Each file is shown once, its blocks in line order with exact `path:start-end`
    attribution; the same index and request always give the same bytes. Paths,
    code names, traceback frames, quoted messages and options in TEXT are matched
    against the repository's facts. The header says the slice's confidence (that
    its first document is what TEXT needs), marked low when little in the
    repository matches TEXT (its relevance below retrieval.confidence_floor):
    then nothing is packed, the header naming the nearest matches, unless
    --min-confidence says otherwise. The JSON form is a stable contract: use_case,
    budget, tokens, fingerprint, retrieval, note (why retrieval is lexical, and
    how far the vectors have come while they are embedded; else empty),
    confidence, low_confidence, matched (what TEXT named and what it matched),
    items (one per printed block), text.
    """
    with knowledge_base(repo, store) as kb:
        result, _ = kb.retrieve_logged(
            text, use_case, budget, scopes=scopes or None, min_confidence=min_confidence
        )
    click.echo(result.to_json() if fmt == "json" else result.text, nl=fmt == "json")


def _register() -> None:
    from kbc.cli.evaluate import eval_command
    from kbc.cli.hooks import hook, hooks
    from kbc.cli.knowledge import proposals, propose
    from kbc.cli.maintain import drift, embed, refresh, render, status, views
    from kbc.cli.publish import init_ci, publish
    from kbc.cli.serve import ask, gaps, scopes, search, serve

    for command in (
        refresh,
        embed,
        status,
        drift,
        views,
        render,
        ask,
        search,
        gaps,
        scopes,
        propose,
        proposals,
        serve,
        publish,
        init_ci,
        eval_command,
        hook,
        hooks,
    ):
        cli.add_command(command)


_register()


def main() -> None:
    try:
        cli(prog_name="kbc")
    except Exception as exc:
        if "--debug" in sys.argv[1:]:
            raise
        unexpected(exc)
