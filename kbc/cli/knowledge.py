"""Commands for team knowledge: propose a change, and review the proposals."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

import click

from kbc.cli.common import knowledge_base, reading_options


@click.command()
@click.argument("path")
@reading_options
@click.option(
    "--content",
    "content_file",
    type=click.File("r", encoding="utf-8"),
    help="The whole new document ('-' reads standard input).",
)
@click.option(
    "--diff",
    "diff_file",
    type=click.File("r", encoding="utf-8"),
    help="A unified diff of the document ('-' reads standard input).",
)
@click.option("--rationale", required=True, help="Why the document should change.")
@click.option("--author", required=True, help="Who proposes it (an agent's or a person's name).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def propose(
    ctx: click.Context,
    path: str,
    repo: Path,
    store: Path | None,
    content_file: click.File | None,
    diff_file: click.File | None,
    rationale: str,
    author: str,
    fmt: str,
) -> None:
    """Propose a change to the knowledge document PATH, as a new branch of its root.

    PATH is relative to the knowledge root (prefixed by the root's name when
    several are configured, or as retrieval shows it: @knowledge/<root>/<path>).
    kbc builds one commit on top of the root's followed branch and stores it on
    kbc/proposal-<id>, pushed when the root has a remote; the work tree, HEAD
    and the followed branch never change. Credentials are redacted first. With a
    forge configured (forge.kind, forge.repository, forge.token or
    KBC_FORGE_TOKEN), the pushed branch is opened as a pull (merge) request there
    with the rationale.
    """
    content = content_file.read() if content_file is not None else None  # type: ignore[attr-defined]
    diff = diff_file.read() if diff_file is not None else None  # type: ignore[attr-defined]
    with knowledge_base(repo, store) as kb:
        found = kb.proposals.propose(path, content=content, diff=diff, rationale=rationale, author=author)
    if fmt == "json":
        click.echo(json.dumps(asdict(found), indent=1, ensure_ascii=False))
        return
    where = " and pushed" if found.pushed else ""
    click.echo(
        f"proposed {found.root}/{found.path} on branch {found.branch}{where} "
        f"(commit {found.commit[:12]} on {found.base[:12]}); "
        f"review it with `kbc proposals show {found.id}`"
    )
    if found.request:
        click.echo(f"request {found.review}: {found.request}")
    if found.request_error:
        click.echo(f"warning: no request opened: {found.request_error}", err=True)


@click.command()
@click.argument("action", type=click.Choice(["list", "show", "close"]), default="list")
@click.argument("proposal_id", required=False)
@reading_options
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def proposals(
    ctx: click.Context, action: str, proposal_id: str | None, repo: Path, store: Path | None, fmt: str
) -> None:
    """List the proposals to the knowledge roots, show one with its diff, or close one.

    A proposal is open until a person merges its branch (then merged: its commit
    is reachable from the followed branch, or that branch holds its text) or
    closes it (its branch moves to refs/kbc/closed/, kept). With a forge
    configured, an open proposal's line ends with its request's state and
    review (`#12 open, approved`), and closing one closes its request.
    """
    if action != "list" and not proposal_id:
        click.echo(
            f"error: `kbc proposals {action}` needs a proposal id (`kbc proposals` lists them)", err=True
        )
        sys.exit(2)
    with knowledge_base(repo, store) as kb:
        if action == "list":
            found = kb.proposals.all()
            if fmt == "json":
                click.echo(json.dumps([asdict(p) for p in found], indent=1, ensure_ascii=False))
            elif not found:
                click.echo("No proposals.")
            for p in found if fmt == "text" else []:
                review = f"  [{p.review}{' ' + p.request if p.request else ''}]" if p.review else ""
                review += f"  [request not read: {p.request_error}]" if p.request_error else ""
                click.echo(
                    f"{p.id}  {p.status:<7} {p.root}/{p.path}  by {p.author}, {p.date[:10]}: "
                    f"{p.rationale.splitlines()[0] if p.rationale else ''}{review}"
                )
            return
        assert proposal_id is not None
        if action == "close":
            closed = kb.proposals.close(proposal_id)
            click.echo(
                json.dumps(asdict(closed), indent=1)
                if fmt == "json"
                else f"closed {closed.id} ({closed.root}/{closed.path}); its branch is kept as "
                f"refs/kbc/closed/proposal-{closed.id}"
            )
            return
        one, diff = kb.proposals.get(proposal_id)
    if fmt == "json":
        click.echo(json.dumps({**asdict(one), "diff": diff}, indent=1, ensure_ascii=False))
        return
    click.echo(
        f"proposal {one.id} · {one.status} · {one.root}/{one.path} · branch {one.branch}\n"
        f"by {one.author}, {one.date}\n\n{one.rationale}\n"
    )
    click.echo(diff, nl=False)
