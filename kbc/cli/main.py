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
from kbc.domain.errors import KbcError

if TYPE_CHECKING:
    from kbc.domain.models import AnalysisResult
    from kbc.domain.settings import Settings
    from kbc.services.analyze import AnalyzeSummary
    from kbc.services.refresh import RefreshSummary
    from kbc.views.build import ViewsSummary

F = TypeVar("F", bound=Callable[..., Any])

PROGRESS_MIN_FILES = 50


def _fail(error: KbcError, debug: bool) -> None:
    if debug:
        raise error
    click.echo(f"error: {error}", err=True)
    sys.exit(error.exit_code)


def _settings(root: Path, **overrides: Any) -> Settings:
    from kbc.domain.settings import load_settings

    return load_settings(root, overrides=overrides)


def _progress(total: int) -> Callable[[AnalysisResult], None]:
    if total < PROGRESS_MIN_FILES or not sys.stderr.isatty():
        return lambda _result: None
    bar = click.progressbar(length=total, label="analyzing", file=sys.stderr,
                            show_pos=True, show_eta=True)
    bar.__enter__()
    done = [0]

    def step(_result: AnalysisResult) -> None:
        done[0] += 1
        bar.update(1)
        if done[0] >= total:
            bar.__exit__(None, None, None)

    return step


def _render_summary(summary: AnalyzeSummary) -> str:
    skipped = ", ".join(f"{reason} {n}" for reason, n in summary.skipped_by_reason.items())
    lines = [
        f"kbc analyze: {summary.root}",
        f"  files         {summary.files} text files; {summary.python_files} Python "
        f"({summary.parsed} parsed, {summary.cached} from cache)",
        f"  symbols       {summary.symbols}",
        f"  edges         {summary.import_edges} import, {summary.call_edges} call",
        f"  entry points  {summary.entry_points}",
        f"  integrations  {summary.integrations}",
        f"  skipped       {summary.skipped}" + (f" ({skipped})" if skipped else "")
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


def _build_options(command: F) -> F:
    """PATH, --store, --format and --workers: shared by the commands that build."""
    for option in reversed([
        click.argument("path", type=click.Path(file_okay=False, path_type=Path), default="."),
        click.option("--store", "store", type=click.Path(file_okay=False, path_type=Path),
                     help="Store folder (default: <PATH>/.kbc)."),
        click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                     show_default=True, help="Summary format."),
        click.option("--workers", type=int, help="Worker processes (default: one per CPU)."),
    ]):
        command = option(command)
    return command


def _reading_options(command: F) -> F:
    """--repo and --store: shared by the commands that read a built store."""
    command = click.option("--store", "store", type=click.Path(file_okay=False, path_type=Path),
                           help="Store folder (default: <repo>/.kbc).")(command)
    return click.option("--repo", "repo", type=click.Path(file_okay=False, path_type=Path),
                        default=".", show_default=True, help="The repository.")(command)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kbc")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of short error messages.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """kbc compiles a repository into a knowledge base for coding agents."""
    ctx.obj = {"debug": debug}


@cli.command()
@_build_options
@click.option("--max-file-bytes", type=int, help="Skip files larger than this.")
@click.pass_context
def analyze(ctx: click.Context, path: Path, store: Path | None, fmt: str,
            workers: int | None, max_file_bytes: int | None) -> None:
    """Extract static facts and graphs from the repository at PATH.

    Discovers tracked text files, analyzes every Python file with libcst
    (cached by content), builds the import and call graphs and writes the
    store that later passes read.
    """
    from dataclasses import asdict

    from kbc.services.analyze import analyze_repository

    try:
        settings = _settings(path, workers=workers, max_file_bytes=max_file_bytes)
        summary = analyze_repository(path, settings, store, progress=_progress)
    except KbcError as error:
        _fail(error, ctx.obj["debug"])
        return
    if fmt == "json":
        click.echo(json.dumps(asdict(summary), indent=1, sort_keys=True))
    else:
        click.echo(_render_summary(summary))


@cli.command()
@click.argument("name")
@_reading_options
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.pass_context
def symbols(ctx: click.Context, name: str, repo: Path, store: Path | None, fmt: str) -> None:
    """Show where NAME is defined (path:start-end), its callers and its callees.

    NAME is a qualified name (pkg.mod.Class.method), a dotted suffix
    (Class.method) or a bare name.
    """
    from kbc.domain.codec import to_data
    from kbc.services.analyze import store_path
    from kbc.services.symbols import find_symbols
    from kbc.store.facts_store import FactsStore

    try:
        settings = _settings(repo)
        reports = find_symbols(FactsStore(store_path(repo, settings, store)), name)
    except KbcError as error:
        _fail(error, ctx.obj["debug"])
        return
    if not reports:
        click.echo(f"no symbol named {name!r}; try a shorter or a qualified name", err=True)
        sys.exit(1)
    if fmt == "json":
        data = [dict(to_data(r), location=r.location) for r in reports]
        click.echo(json.dumps(data, indent=1, sort_keys=True))
        return
    blocks = []
    for report in reports:
        symbol = report.symbol
        lines = [f"{symbol.qname}  {symbol.kind}  {report.location}"]
        head = f"{'async ' if symbol.is_async else ''}{symbol.name}{symbol.signature}"
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


def _views_progress(total: int) -> Callable[[], None]:
    done = [0]

    def tick() -> None:
        done[0] += 1
        if sys.stderr.isatty():
            click.echo(f"\rinterpreting views {done[0]}/{total}", err=True, nl=done[0] >= total)

    return tick


def _render_views_summary(summary: ViewsSummary) -> str:
    kinds = ", ".join(f"{kind} {n}" for kind, n in summary.by_kind.items())
    sources = ", ".join(f"{source} {n}" for source, n in summary.by_source.items())
    lines = ["kbc views:", f"  views         {summary.views} ({kinds})", f"  prose         {sources}"]
    if summary.model:
        lines.append(f"  llm           {summary.model}: {summary.llm_calls} calls, {summary.cached} cached, "
                     f"{summary.repaired} repaired, {summary.failed} failed")
        lines.append(f"  tokens        {summary.prompt_tokens} in, {summary.completion_tokens} out, "
                     f"cost ${summary.cost:.4f}")
        lines.append(f"  grounding     {summary.ungrounded} ungrounded statements removed")
    else:
        lines.append("  llm           none (set KBC_LLM_MODEL to have an LLM write the prose)")
    for error in summary.errors[:10]:
        lines.append(f"    {error}")
    if len(summary.errors) > 10:
        lines.append(f"    … and {len(summary.errors) - 10} more")
    return "\n".join(lines)


def _embed_progress(stage: str, done: int, total: int) -> None:
    if sys.stderr.isatty() and total >= PROGRESS_MIN_FILES:
        click.echo(f"\r{stage} {done}/{total}", err=True, nl=done >= total)


@cli.command()
@_build_options
@click.option("--no-llm", is_flag=True,
              help="Never call an LLM: the views' prose comes from docstrings only.")
@click.pass_context
def build(ctx: click.Context, path: Path, store: Path | None, fmt: str, workers: int | None,
          no_llm: bool) -> None:
    """Run every pass on the repository at PATH: facts, graphs, views, then the index.

    Views (architecture, modules, features, workflows, entry points, domain
    concepts, business rules, integrations) take their facts from the code;
    their prose comes from the LLM named by KBC_LLM_MODEL (cached by facts), or
    from docstrings without one. The index holds line-window chunks of every
    tracked text file and of the views (secrets redacted) in a lexical index
    and, when the embedding model loads, as local embeddings in Chroma.
    Re-running re-does only what changed.
    """
    from dataclasses import asdict

    from kbc.services.build import build_repository

    try:
        settings = _settings(path, workers=workers)
        summary = build_repository(path, settings, store, progress=_progress,
                                   embed_progress=_embed_progress, no_llm=no_llm,
                                   views_progress=_views_progress)
    except KbcError as error:
        _fail(error, ctx.obj["debug"])
        return
    if fmt == "json":
        click.echo(json.dumps(asdict(summary), indent=1, sort_keys=True))
        return
    index = summary.index
    click.echo(_render_summary(summary.analyze))
    click.echo(_render_views_summary(summary.views))
    retrieval = index.retrieval + (f" ({index.note})" if index.note else "")
    click.echo("\n".join([
        "kbc index:",
        f"  chunks        {index.chunks} from {index.files} files "
        f"({index.changed_files} changed, {index.removed_files} removed)",
        f"  embeddings    {index.units} units, {index.embedded} embedded now, "
        f"{index.removed_units} removed",
        f"  secrets       {index.secrets} redacted",
        f"  retrieval     {retrieval}",
        f"  time          {index.seconds:.2f} s",
    ]))


def _render_refresh(summary: RefreshSummary) -> str:
    changes = summary.changes
    lines = [f"kbc refresh: {summary.root}" + (f" (following {summary.url} {summary.branch})"
                                                if summary.url else ""),
             f"  path          {summary.path}: {summary.reason}",
             f"  commits       {summary.before[:10] or '(none)'} → {summary.after[:10] or '(none)'}",
             f"  changed       {len(changes.added)} added, {len(changes.modified)} modified, "
             f"{len(changes.deleted)} deleted, {len(changes.renamed)} renamed"]
    build = summary.build
    if build is not None:
        lines.append(f"  work          parsed {build.analyze.parsed} ({build.analyze.cached} from cache), "
                     f"re-chunked {build.index.changed_files} files, removed {build.index.removed_files}, "
                     f"embedded {build.index.embedded} units, dropped {build.index.removed_units}")
        lines.append(f"  views         {build.views.views}; llm calls {build.views.llm_calls}, "
                     f"failed {build.views.failed}")
        if build.waited >= 0.5:
            lines.append(f"  lock          waited {build.waited:.1f} s for another writer")
    behind = ", ".join(report.path for report in summary.drift[:5])
    more = f", … {len(summary.drift) - 5} more" if len(summary.drift) > 5 else ""
    lines.append(f"  drift         {len(summary.drift)} documents behind the code"
                 + (f" ({behind}{more}; see `kbc drift`)" if summary.drift else ""))
    lines.append(f"  time          {summary.seconds:.2f} s")
    return "\n".join(lines)


@cli.command()
@click.argument("target", default=".")
@click.option("--store", "store", type=click.Path(file_okay=False, path_type=Path),
              help="Store folder (default: <work tree>/.kbc).")
@click.option("--branch", default="", help="Branch to follow when TARGET is a URL (default: the remote's).")
@click.option("--full", is_flag=True, help="Rebuild from scratch whatever changed.")
@click.option("--no-llm", is_flag=True, help="Never call an LLM: view prose from docstrings only.")
@click.option("--lock-timeout", type=int, help="Seconds to wait for another writer (default 600).")
@click.option("--ci", is_flag=True, help="Print a JSON summary for CI; exit codes below.")
@click.pass_context
def refresh(ctx: click.Context, target: str, store: Path | None, branch: str, full: bool, no_llm: bool,
            lock_timeout: int | None, ci: bool) -> None:
    """Bring the knowledge base of TARGET (a path or a git URL) up to its current commit.

    Only changed files are parsed, chunked and embedded again, and view prose is
    asked for again only where a view's facts changed; past the drift threshold
    (KB_FULL_REBUILD_FRACTION of tracked files or KB_FULL_REBUILD_FILES files)
    the store is rebuilt from scratch. A URL is cloned into kbc's data folder
    (KBC_DATA_DIR) and its branch followed by fetch and hard reset.

    Exit codes: 0 done (or already up to date), 1 failure, 2 configuration
    error, 3 unreadable store, 4 another writer held the store too long,
    5 the target cannot be used.
    """
    from kbc.analyzers.gitrepo import is_url
    from kbc.services.refresh import refresh as run_refresh

    try:
        local = Path(".") if is_url(target) else Path(target)
        settings = _settings(local, lock_timeout=lock_timeout)
        summary = run_refresh(target, settings, store, branch=branch, no_llm=no_llm, force_full=full,
                              on_wait=lambda message: click.echo(message, err=True))
    except KbcError as error:
        if ci:
            click.echo(json.dumps({"ok": False, "error": error.message, "hint": error.hint,
                                   "exit_code": error.exit_code}, indent=1))
            sys.exit(error.exit_code)
        _fail(error, ctx.obj["debug"])
        return
    if ci:
        click.echo(json.dumps({"ok": True, **summary.as_data()}, indent=1, sort_keys=True))
    else:
        click.echo(_render_refresh(summary))


@cli.command()
@_reading_options
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def drift(ctx: click.Context, repo: Path, store: Path | None, fmt: str) -> None:
    """List the Markdown documents that are behind the code.

    A document names the code it governs with a front-matter `refs:` list of
    globs; it is behind when governed files changed after its last commit, when
    it mentions symbols that no longer exist, or when a ref matches no file.
    Reads the store written by `kbc build` (or `kbc analyze`).
    """
    from kbc.domain.codec import to_data
    from kbc.services.analyze import store_path
    from kbc.services.drift import find_drift, render_drift

    try:
        settings = _settings(repo)
        reports = find_drift(repo, store_path(repo, settings, store))
    except KbcError as error:
        _fail(error, ctx.obj["debug"])
        return
    if fmt == "json":
        click.echo(json.dumps([to_data(r) for r in reports], indent=1, sort_keys=True))
    else:
        click.echo(render_drift(reports), nl=False)


@cli.command()
@click.argument("text")
@_reading_options
@click.option("--use-case", "use_case", default="implementation", show_default=True,
              help="Profile: implementation, task-breakdown, story-breakdown, architecture, review, qa.")
@click.option("--budget", type=int, help="Token budget (default: the profile's).")
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True)
@click.pass_context
def retrieve(ctx: click.Context, text: str, repo: Path, store: Path | None, use_case: str,
             budget: int | None, fmt: str) -> None:
    """Print the slice of the repository that TEXT needs, within a token budget.

    Items carry exact `path:start-end` attribution; the same index and request
    always give the same bytes. The JSON form is a stable contract:
    use_case, budget, tokens, fingerprint, retrieval, items, text.
    """
    from kbc.services.retrieve import open_retriever, profile_named

    try:
        settings = _settings(repo)
        profile = profile_named(repo, use_case)
        if settings.auto_refresh:
            from kbc.services.refresh import refresh as run_refresh

            refreshed = run_refresh(str(repo), settings, store, no_llm=False,
                                    on_wait=lambda message: click.echo(message, err=True))
            if refreshed.path != "up-to-date":
                click.echo(f"kbc: refreshed the store first ({refreshed.path}: {refreshed.reason})", err=True)
        retriever = open_retriever(repo, settings, store)
        try:
            result = retriever.retrieve(text, profile, budget)
        finally:
            retriever.close()
    except KbcError as error:
        _fail(error, ctx.obj["debug"])
        return
    click.echo(result.to_json() if fmt == "json" else result.text, nl=fmt == "json")


@cli.command()
@_reading_options
@click.option("--kind", type=click.Choice(["architecture", "module", "feature", "workflow", "entry_points",
                                           "domain_concepts", "business_rules", "integrations"]),
              help="Only views of this kind.")
@click.option("--id", "view_id", help="Only the view with this id (e.g. module:pkg.sub).")
@click.option("--format", "fmt", type=click.Choice(["md", "json", "list"]), default="list",
              show_default=True, help="list: one line per view; md: rendered; json: the documents.")
@click.pass_context
def views(ctx: click.Context, repo: Path, store: Path | None, kind: str | None, view_id: str | None,
          fmt: str) -> None:
    """Show the views written by `kbc build`."""
    from kbc.domain.codec import to_data
    from kbc.services.analyze import store_path
    from kbc.services.views import read_views
    from kbc.views.render import render_view

    try:
        settings = _settings(repo)
        found = read_views(store_path(repo, settings, store))
    except KbcError as error:
        _fail(error, ctx.obj["debug"])
        return
    ids = {v.id for v in found}
    chosen = [v for v in found if (kind is None or v.kind == kind) and (view_id is None or v.id == view_id)]
    if view_id is not None and not chosen:
        click.echo(f"error: no view {view_id!r}; `kbc views` lists them", err=True)
        sys.exit(1)
    if fmt == "json":
        click.echo(json.dumps([to_data(v) for v in chosen], indent=1, sort_keys=True, ensure_ascii=False))
    elif fmt == "md":
        click.echo("\n".join(render_view(v, ids) for v in chosen), nl=False)
    else:
        for v in chosen:
            click.echo(f"{v.id}\t{v.provenance.source}\t{v.title}")


@cli.command()
@_reading_options
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder to write the Markdown into.")
@click.pass_context
def render(ctx: click.Context, repo: Path, store: Path | None, out: Path) -> None:
    """Write every view as Markdown (Mermaid diagrams included) with an index page."""
    from kbc.services.analyze import store_path
    from kbc.services.views import render_folder

    try:
        settings = _settings(repo)
        written = render_folder(store_path(repo, settings, store), repo, out)
    except KbcError as error:
        _fail(error, ctx.obj["debug"])
        return
    click.echo(f"wrote {len(written)} pages to {out} (start at {out / 'index.md'})")


def main() -> None:
    cli(prog_name="kbc")
