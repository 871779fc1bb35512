"""Commands that keep a knowledge base current and show what it holds: refresh, embed, status,
drift, views, render."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kbc.cli.common import knowledge_base, reading_options, say, settings_for
from kbc.domain.errors import KbcError, exit_codes_text
from kbc.domain.views import VIEW_KINDS

if TYPE_CHECKING:
    from kbc.services.refresh import RefreshSummary


def _render_refresh(summary: RefreshSummary) -> str:
    from kbc.analyzers.gitrepo import without_password

    changes = summary.changes
    followed = f" (following {without_password(summary.url)} {summary.branch})" if summary.url else ""
    lines = [
        f"kbc refresh: {summary.root}{followed}",
        f"  path          {summary.mode}: {summary.reason}",
        f"  commits       {summary.before[:10] or '(none)'} → {summary.after[:10] or '(none)'}",
        f"  changed       {len(changes.added)} added, {len(changes.modified)} modified, "
        f"{len(changes.deleted)} deleted, {len(changes.renamed)} renamed",
    ]
    build = summary.build
    if build is not None:
        lines.append(
            f"  work          parsed {build.analyze.parsed} ({build.analyze.cached} from cache), "
            f"re-chunked {build.index.changed_files} files ({build.index.chunks_from_cache} from cache), "
            f"removed {build.index.removed_files}, embedded {build.index.embedded} units, "
            f"retired {build.index.removed_units}"
        )
        lines.append(
            f"  views         {build.views.views}; llm calls {build.views.llm_calls}, "
            f"failed {build.views.failed}"
        )
        if build.waited >= 0.5:
            lines.append(f"  lock          waited {build.waited:.1f} s for another writer")
    behind = ", ".join(report.path for report in summary.drift[:5])
    more = f", … {len(summary.drift) - 5} more" if len(summary.drift) > 5 else ""
    lines.append(
        f"  drift         {len(summary.drift)} documents behind the code"
        + (f" ({behind}{more}; see `kbc drift`)" if summary.drift else "")
    )
    lines.append(f"  time          {summary.seconds:.2f} s")
    return "\n".join(lines)


@click.command(epilog=exit_codes_text())
@click.argument("target", default=".")
@click.option(
    "--store",
    "store",
    type=click.Path(file_okay=False, path_type=Path),
    help="Store folder (default: <work tree>/.kbc).",
)
@click.option("--branch", default="", help="Branch to follow when TARGET is a URL (default: the remote's).")
@click.option("--full", is_flag=True, help="Rebuild from scratch whatever changed, reading no cache.")
@click.option("--no-llm", is_flag=True, help="Never call an LLM: view prose from docstrings only.")
@click.option("--lock-timeout", type=int, help="Seconds to wait for another writer (default 600).")
@click.option("--ci", is_flag=True, help="Print a JSON summary for CI; exit codes below.")
@click.option(
    "--knowledge",
    "knowledge",
    multiple=True,
    metavar="[NAME=]PATH|URL",
    help="A knowledge root to index beside the code (repeatable; adds to [[knowledge]]).",
)
@click.pass_context
def refresh(
    ctx: click.Context,
    target: str,
    store: Path | None,
    branch: str,
    full: bool,
    no_llm: bool,
    lock_timeout: int | None,
    ci: bool,
    knowledge: tuple[str, ...],
) -> None:
    """Bring the knowledge base of TARGET (a path or a git URL) up to its current commit.

    Only changed files are parsed, chunked and embedded again, and view prose is
    asked for again only where a view's facts changed; past the drift threshold
    (KB_FULL_REBUILD_FRACTION of tracked files or KB_FULL_REBUILD_FILES files)
    the store is rebuilt whole, each file's facts, chunks and vectors taken from
    the caches where its content was seen before, so a branch switched to and
    back costs what changed (--full reads no cache). A URL is cloned into kbc's data folder
    (KBC_DATA_DIR) and its branch followed by fetch and hard reset. A refresh
    returns with every vector embedded, those a stopped background embedding
    left included.
    """
    from kbc.analyzers.gitrepo import is_url
    from kbc.services.refresh import refresh as run_refresh

    try:
        local = Path(".") if is_url(target) else Path(target)
        settings = settings_for(local, lock_timeout=lock_timeout, knowledge=knowledge or None)
        summary = run_refresh(
            target, settings, store, branch=branch, no_llm=no_llm, force_full=full, on_wait=say
        )
    except KbcError as error:
        if ci:
            click.echo(
                json.dumps(
                    {"ok": False, "error": error.message, "hint": error.hint, "exit_code": error.exit_code},
                    indent=1,
                )
            )
            sys.exit(error.exit_code)
        raise  # reported by the command group, once for every command
    if ci:
        click.echo(json.dumps({"ok": True, **summary.as_data()}, indent=1, sort_keys=True))
    else:
        click.echo(_render_refresh(summary))


@click.command()
@reading_options
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--propose",
    is_flag=True,
    help="Make each document behind the code a proposal: a branch with the document unchanged "
    "and a comment block saying why (kbc proposals lists them).",
)
@click.option("--no-llm", is_flag=True, help="With --propose: never ask the LLM for a rewrite.")
@click.pass_context
def drift(ctx: click.Context, repo: Path, store: Path | None, fmt: str, propose: bool, no_llm: bool) -> None:
    """List the Markdown documents that are behind the code.

    A document names the code it governs with a front-matter `refs:` list of
    globs; it is behind when governed files changed after its last commit, when
    it mentions symbols that no longer exist, or when a ref matches no file.
    Documents of the knowledge roots count too: their refs (`repo:` globs, or
    plain ones) name this repository's code. Reads the store written by
    `kbc build` (or `kbc analyze`).

    With --propose, each document behind becomes a proposal (a branch of its
    own repository, nothing else changed) holding the document unchanged and a
    comment block listing the changed files, the commits since and the names
    gone; never invented prose. With an LLM configured (KBC_LLM_MODEL) the
    proposal holds its suggested rewrite instead, marked as machine-written, but
    only when every name the rewrite mentions exists in the code.
    """
    from dataclasses import asdict

    from kbc.services.drift import render_drift
    from kbc.services.payloads import drift_data

    with knowledge_base(repo, store, facts=True) as kb:
        reports = kb.reads.drift()
        made = kb.proposals.propose_drift(no_llm=no_llm) if propose else []
    if propose:
        if fmt == "json":
            click.echo(json.dumps([asdict(p) for p in made], indent=1, ensure_ascii=False))
        else:
            for p in made:
                click.echo(f"proposed {p.root}/{p.path} on {p.branch}")
            click.echo(
                f"{len(made)} proposal{'s' if len(made) != 1 else ''} from {len(reports)} "
                f"document{'s' if len(reports) != 1 else ''} behind the code"
            )
        return
    if fmt == "json":
        click.echo(json.dumps(drift_data(reports), indent=1, sort_keys=True))
    else:
        click.echo(render_drift(reports), nl=False)


@click.command()
@reading_options
@click.option("--kind", type=click.Choice(VIEW_KINDS), help="Only views of this kind.")
@click.option("--id", "view_id", help="Only the view with this id (e.g. module:pkg.sub).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "json", "list"]),
    default="list",
    show_default=True,
    help="list: one line per view; md: rendered; json: the documents.",
)
@click.pass_context
def views(
    ctx: click.Context, repo: Path, store: Path | None, kind: str | None, view_id: str | None, fmt: str
) -> None:
    """Show the views written by `kbc build`."""
    from kbc.services.payloads import views_data
    from kbc.views.render import render_view

    with knowledge_base(repo, store, facts=True) as kb:
        found = kb.reads.views()
    ids = {v.id for v in found}
    chosen = [v for v in found if (kind is None or v.kind == kind) and (view_id is None or v.id == view_id)]
    if view_id is not None and not chosen:
        click.echo(f"error: no view {view_id!r}; `kbc views` lists them", err=True)
        sys.exit(1)
    if fmt == "json":
        click.echo(json.dumps(views_data(chosen), indent=1, sort_keys=True, ensure_ascii=False))
    elif fmt == "md":
        click.echo("\n".join(render_view(v, ids) for v in chosen), nl=False)
    else:
        for v in chosen:
            click.echo(f"{v.id}\t{v.provenance.source}\t{v.title}")


@click.command()
@reading_options
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder to write the Markdown into.",
)
@click.pass_context
def render(ctx: click.Context, repo: Path, store: Path | None, out: Path) -> None:
    """Write every view as Markdown (Mermaid diagrams included) with an index page."""
    with knowledge_base(repo, store, facts=True) as kb:
        written = kb.reads.render(out)
    click.echo(f"wrote {len(written)} pages to {out} (start at {out / 'index.md'})")


@click.command()
@reading_options
@click.option(
    "--background",
    is_flag=True,
    hidden=True,
    help="Niced, the model on one thread (how `kbc build` starts it).",
)
@click.option(
    "--lock",
    "lock",
    type=int,
    hidden=True,
    help="A descriptor of the fill lock, locked for this process by the one starting it.",
)
@click.pass_context
def embed(ctx: click.Context, repo: Path, store: Path | None, background: bool, lock: int | None) -> None:
    """Embed the units the last build left to embed, and turn retrieval hybrid.

    A build with more units to embed than index.wait_units publishes its index
    lexical and starts this in the background (niced, its model on one thread);
    run it to finish in the foreground instead. A first build of a repository
    with more Python files than index.first_files leaves it the facts, views
    and team knowledge too, which it reads first. It resumes where a stopped run
    left off, waits for another one on the same store, and does nothing when no
    unit is waiting.
    """
    from kbc.cli.common import embed_progress
    from kbc.services.later import fill_in

    shown = embed_progress()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    if background:
        click.echo(f"kbc embed: started {started} (pid {os.getpid()})")
    done = fill_in(
        repo,
        settings_for(repo),
        store,
        background=background,
        lock=lock,
        on_wait=say,
        progress=lambda n, total: shown("embedding", n, total),
    )
    if done.units == 0:
        click.echo(f"kbc embed: no unit waits to be embedded; retrieval {done.retrieval}")
        return
    click.echo(
        f"kbc embed: {done.embedded} of {done.units} units embedded now in {done.seconds:.1f} s; "
        f"retrieval {done.retrieval}"
    )


@click.command()
@reading_options
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def status(ctx: click.Context, repo: Path, store: Path | None, fmt: str) -> None:
    """Show what the store holds and what retrieval will use.

    The last finished build (commit, files, kbc version, when), facts, files by
    role (source, test, doc, config, example, vendored, generated, minified,
    catalog, data, lock), views by kind, the index (files, chunks, embedding units embedded of the total,
    the model and the width of its vectors) and the retrieval mode (`hybrid`, or `lexical` with the
    reason). Builds nothing; a model behind an API is asked to embed one probe text.
    """
    from kbc.services.payloads import status_data

    with knowledge_base(repo, store) as kb:
        found = kb.status()
    if fmt == "json":
        click.echo(json.dumps(status_data(found), indent=1, sort_keys=True))
        return
    last = found.last_build
    lines = [
        f"kbc status: {found.repo}",
        f"  store         {found.store}",
        "  last build    "
        + (
            f"{last['finished']} at {str(last['commit'])[:12] or 'no commit'} "
            f"({last['tracked']} files, kbc {last['kbc']})"
            if last
            else "none finished"
        ),
    ]
    facts = found.facts
    if facts:
        lines.append(
            f"  facts         {facts['files']} files ({facts['python_files']} Python), "
            f"{facts['symbols']} symbols, {facts['failed']} not analyzed"
        )
    if found.roles:
        lines.append("  roles         " + ", ".join(f"{role} {n}" for role, n in found.roles.items()))
    views = found.views
    lines.append(
        f"  views         {sum(views.values())}"
        + (f" ({', '.join(f'{k} {v}' for k, v in views.items())})" if views else "")
    )
    index = found.index
    if index:
        documents = [f"{index['files']} files", f"{index['views']} views"]
        documents += [f"{index['knowledge']} team-knowledge documents"] if index["knowledge"] else []
        lines.append(f"  index         {index['chunks']} chunks from {', '.join(documents)}")
        made = ", ".join(
            part
            for key, part in (
                ("model", f"{index.get('model')}"),
                ("width", f"{index.get('width')}-wide"),
                ("fingerprint", f"fingerprint {index.get('fingerprint')}"),
            )
            if index.get(key)
        )
        lines.append(
            f"  embeddings    {index['embedded']} of {index['units']} units" + (f" ({made})" if made else "")
        )
    lines.append(f"  retrieval     {found.retrieval}")
    if found.note:
        lines.append(f"  note          {found.note}")
    click.echo("\n".join(lines))
