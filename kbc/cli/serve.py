"""Commands for people and agents that consume a knowledge base: ask, gaps, serve."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kbc.cli.common import knowledge_base, reading_options, say, settings_for

if TYPE_CHECKING:
    from kbc.services.knowledge import KnowledgeBase
    from kbc.services.workspace import Workspace

GAP_LINE = 200  # characters of a logged question shown on its line (--format json gives all it logged)


@click.command()
@click.argument("question")
@reading_options
@click.option("--budget", type=int, help="Tokens of sources to answer from (default: the qa profile's).")
@click.option("--no-llm", is_flag=True, help="Never call an LLM: quote the best passages instead.")
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    help="A knowledge scope to answer from (repeatable; default: every scope but projects/...).",
)
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True)
@click.pass_context
def ask(
    ctx: click.Context,
    question: str,
    repo: Path,
    store: Path | None,
    budget: int | None,
    no_llm: bool,
    scopes: tuple[str, ...],
    fmt: str,
) -> None:
    """Answer QUESTION from the repository, citing [path:start-end] for every claim.

    Sources come from the `qa` use case; the LLM named by KBC_LLM_MODEL writes
    the answer and every citation is checked against the retrieved sources (one
    that points elsewhere is dropped and counted). Without an LLM the answer
    quotes the best passages and says so.
    """
    from kbc.services.payloads import answer_data

    with knowledge_base(repo, store) as kb:
        answer, query_id = kb.ask(question, no_llm=no_llm, budget=budget, scopes=scopes or None)
    if fmt == "json":
        click.echo(json.dumps(answer_data(answer, query_id), indent=1, ensure_ascii=False))
        return
    click.echo(answer.text, nl=False)
    footer = [
        f"\n_Sources ({answer.retrieval} retrieval): "
        + ", ".join(f"{s.path}:{s.start_line}-{s.end_line}" for s in answer.sources)
        + "._"
    ]
    if answer.dropped:
        footer.append(
            f"_{len(answer.dropped)} citation{'s' if len(answer.dropped) != 1 else ''} "
            f"pointing outside the sources removed: {', '.join(answer.dropped)}._"
        )
    click.echo("\n".join(footer))


@click.command()
@click.argument("query")
@reading_options
@click.option("-k", "k", type=click.IntRange(1), default=10, show_default=True, help="How many hits.")
@click.option("--budget", type=click.IntRange(1), help="Tokens the hits' texts may take (default: no limit).")
@click.option(
    "--use-case",
    "use_case",
    default="implementation",
    show_default=True,
    help="Profile whose weights rank the hits.",
)
@click.option("--scope", "scopes", multiple=True, help="A knowledge scope to search (repeatable).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def search(
    ctx: click.Context,
    query: str,
    repo: Path,
    store: Path | None,
    k: int,
    budget: int | None,
    use_case: str,
    scopes: tuple[str, ...],
    fmt: str,
) -> None:
    """Look QUERY up in the index without packing a slice: the best chunks (code, tests, docs,
    views, team knowledge), each as path:start-end with its score and breadcrumb.

    The same as MCP `search` and `GET /api/v1/search`; --format json gives each hit's text.
    To prime work on a task prefer `kbc retrieve`.
    """
    with knowledge_base(repo, store) as kb:
        hits = kb.search(query, k, use_case, scopes=scopes or None, budget=budget)
    if fmt == "json":
        from kbc.services.payloads import hits_data

        click.echo(json.dumps(hits_data(hits), indent=1, ensure_ascii=False))
        return
    if not hits:
        click.echo("Nothing found.")
    for hit in hits:
        heading = f"  · {hit.heading}" if hit.heading else ""
        where = f"{hit.path}:{hit.start_line}-{hit.end_line}"
        click.echo(f"{round(hit.score, 8):.4f}  {where}  ({hit.kind}){heading}")


@click.command()
@reading_options
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def gaps(ctx: click.Context, repo: Path, store: Path | None, fmt: str) -> None:
    """List the questions the knowledge base could not answer, most frequent first.

    A retrieve or ask is a gap when nothing it found passed the relevance floor,
    or when a caller reported (report_usage) that none of its results helped.
    Entries older than gaps.retention_days (KBC_GAP_RETENTION_DAYS) are pruned.
    """
    from kbc.services.payloads import gaps_data

    with knowledge_base(repo, store) as kb:
        found = kb.queries.gaps()
    if fmt == "json":
        click.echo(json.dumps(gaps_data(found), indent=1, ensure_ascii=False))
        return
    if not found:
        click.echo("No knowledge gaps logged.")
        return
    for gap in found:
        question = " ".join(gap.question.split())
        if len(question) > GAP_LINE:
            question = question[:GAP_LINE] + "…"
        click.echo(f"{gap.count}×  {question}")
        click.echo(
            f"    gap {gap.count} of {gap.asked} times asked, last {gap.last}: {'; '.join(gap.reasons)}"
        )


@click.command()
@reading_options
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def scopes(ctx: click.Context, repo: Path, store: Path | None, fmt: str) -> None:
    """List the knowledge scopes with their documents.

    A document's scope is its front-matter `scope:` (one name or a list), else
    its top folder (domain/, conventions/, projects/<name>/). A retrieve or ask
    that names no --scope reads scopes.default (KBC_SCOPES), else every scope
    but the projects/... ones.
    """
    with knowledge_base(repo, store) as kb:
        found = kb.reads.scopes()
        problems = kb.reads.manifest().problems
    if fmt == "json":
        from kbc.services.payloads import scopes_data

        click.echo(json.dumps(scopes_data(found), indent=1, ensure_ascii=False))
        return
    if not found:
        click.echo(
            "No knowledge scopes: no knowledge root was indexed ([[knowledge]] in kbc.toml, "
            "KBC_KNOWLEDGE or `kbc build --knowledge PATH`)."
        )
    for entry in found:
        mark = "" if entry.default else "  (only when asked for)"
        click.echo(
            f"{entry.scope}\t{entry.documents} document{'s' if entry.documents != 1 else ''}"
            f"\t{', '.join(entry.roots)}{mark}"
        )
    for problem in problems:
        click.echo(f"not read: {problem}", err=True)


@click.command()
@click.option(
    "--repo",
    "repos",
    multiple=True,
    metavar="[NAME=]PATH-OR-URL",
    help="A repository to serve: a folder, a git URL (cloned and followed) or a store "
    "published with `kbc publish` (s3://BUCKET/PREFIX/NAME, followed), optionally named; "
    "repeat it to serve several (default: the [[repositories]] of your configuration, "
    "else the current folder).",
)
@click.option(
    "--store", type=click.Path(file_okay=False, path_type=Path), help="Store folder (one repository only)."
)
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="HTTP: address to bind; anything but loopback requires KBC_TOKEN.",
)
@click.option("--port", type=int, default=8765, show_default=True, help="HTTP: port.")
@click.pass_context
def serve(
    ctx: click.Context, repos: tuple[str, ...], store: Path | None, transport: str, host: str, port: int
) -> None:
    """Serve the knowledge base: MCP on stdio, or everything over HTTP.

    stdio: the MCP tools (retrieve_slice, ask, search, get_view, list_views,
    get_symbol, get_file, list_use_cases, list_repositories, report_usage, ...)
    on stdin/stdout.

    http: on one port, the UI in a browser at /, the REST API at /api/v1
    (its OpenAPI document at /api/v1/openapi.json), MCP (streamable HTTP) at
    /mcp and Prometheus metrics at /metrics. When KBC_TOKEN is set every request
    must carry `Authorization: Bearer $KBC_TOKEN` (the UI asks for it once and
    keeps it in a cookie), and it must be set to bind an address other than
    loopback.

    Several repositories (--repo repeated, or [[repositories]] in your
    configuration) are served as one workspace: every tool and endpoint takes a
    repository; retrieve, search and symbols without one read them all and name
    each result's repository. Stores open on first use and close when idle
    (serve.max_open, serve.idle_seconds); a repository without a build is built
    in the background on first use; URL repositories are fetched and refreshed
    every serve.fetch_seconds and on a push webhook (POST /api/v1/hooks/push,
    signed with serve.webhook_secret). A published store (s3://...) is pulled,
    checked and served read-only; its manifest is read every
    serve.publication_poll seconds and a newer publication swapped in whole.

    The server answers from the newest completed build (a `kbc build` or
    `kbc refresh` from another process is followed, never mixed into a request
    in flight). An HTTP session idle for serve.session_idle_seconds is closed;
    at most serve.max_sessions are open at once. A store whose vectors a build
    left to embed, with no process embedding them (it was stopped), gets one
    started in the background; retrieval turns hybrid when it is done.
    """
    from kbc.serve.run import serve as run_server

    served = _served(repos, store)
    token = served.settings.token or None
    run_server(served, transport, host, port, token)


def _served(repos: tuple[str, ...], store: Path | None) -> KnowledgeBase | Workspace:
    """One knowledge base (one folder named, or none), or a workspace of the repositories
    named by --repo or configured in [[repositories]]."""
    from kbc.domain.errors import ConfigError, FieldError, KbcError
    from kbc.domain.workspace import repository_entry
    from kbc.services.embedding import resume_filling
    from kbc.services.knowledge import KnowledgeBase
    from kbc.services.workspace import Workspace

    errors: list[FieldError] = []
    entries = [e for e in (repository_entry(r, "--repo", errors) for r in repos) if e is not None]
    if errors:
        raise ConfigError(errors)
    here = settings_for(Path(".")) if len(entries) != 1 else None  # the user's, with its notices once
    if not entries and here is not None and here.repositories and store is None:
        entries = list(here.repositories)
    alone = len(entries) == 1 and not (entries[0].url or entries[0].projects or entries[0].published)
    if not entries or alone:
        if entries:
            kb = knowledge_base(Path(entries[0].path), store)
        else:
            kb = KnowledgeBase(Path("."), store=store, settings=here, notify=say)
        if resume_filling(kb.root, kb.settings, store) > 0:
            say("kbc: the vectors the last build left are being embedded in the background")
        if entries and entries[0].name != kb.root.name:
            return Workspace.of(kb, entries[0].name)
        return kb
    if store is not None:
        raise KbcError(
            "--store names the store of one repository",
            hint="give each repository its store with store = ... in [[repositories]]",
        )
    return Workspace(entries, here or settings_for(Path(".")), settings_for=settings_for, notify=say)
