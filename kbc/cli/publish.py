"""Commands that take a store out of its repository: publish, init-ci."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import click

from kbc.cli.common import reading_options, say, settings_for

CI_FILES = {"github": "github-actions.yml", "gitlab": "gitlab-ci.yml"}  # in kbc/cli/ci/


def ci_template(kind: str) -> str:
    """The CI configuration ``kbc init-ci`` prints (docs/ci.md shows the same text)."""
    return resources.files("kbc.cli").joinpath("ci", CI_FILES[kind]).read_text(encoding="utf-8")


@click.command()
@click.argument("location", metavar="s3://BUCKET/PREFIX")
@reading_options
@click.option("--name", default="", help="The repository's name in the bucket (default: its folder's).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def publish(ctx: click.Context, location: str, repo: Path, store: Path | None, name: str, fmt: str) -> None:
    """Publish the repository's store to S3-compatible object storage.

    Uploads the newest completed build (after `kbc build` or `kbc refresh --ci`)
    to s3://BUCKET/PREFIX/<name>/: each file once under objects/<sha256> (a
    file the bucket holds already is not sent again), then manifest.json, last,
    so a server following the location (`kbc serve --repo NAME=s3://...`)
    never reads half a publication. The store is copied under its writer lock,
    each database through SQLite's backup API.

    Credentials and endpoint come from your environment or configuration as
    for any AWS client (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_PROFILE,
    AWS_DEFAULT_REGION, AWS_ENDPOINT_URL, ~/.aws/), never from the repository.
    Needs boto3: pip install 'kbc[s3]'.
    """
    from kbc.services.publish import publish as run_publish

    settings = settings_for(repo)
    summary = run_publish(repo, settings, location, store=store, name=name, say=say)
    manifest = summary.manifest
    if fmt == "json":
        data = {
            "location": summary.location,
            "publication": manifest.id,
            "commit": manifest.commit,
            "files": len(manifest.files),
            "uploaded": summary.uploaded,
            "uploaded_bytes": summary.uploaded_bytes,
            "kept": summary.kept,
            "seconds": round(summary.seconds, 3),
        }
        click.echo(json.dumps(data, indent=1, sort_keys=True))
        return
    size = sum(e.size for e in manifest.files)
    click.echo(
        f"kbc publish: {summary.location} publication {manifest.id} (commit {manifest.commit[:12] or '-'})\n"
        f"  files     {len(manifest.files)} ({size} bytes); {summary.uploaded} uploaded "
        f"({summary.uploaded_bytes} bytes), {summary.kept} already there\n"
        f"  time      {summary.seconds:.2f} s"
    )


@click.command("init-ci")
@click.option("--github", "kind", flag_value="github", default=True, help="A GitHub Actions workflow.")
@click.option("--gitlab", "kind", flag_value="gitlab", help="A GitLab CI job.")
def init_ci(kind: str) -> None:
    """Print a CI configuration that builds the knowledge base and publishes it.

    On every push to the main branch: restore the previous store from the CI
    cache, `kbc refresh --ci` (the job fails on a refresh error), then
    `kbc publish` to the bucket named by the KBC_PUBLISH variable. Save it as
    .github/workflows/kbc.yml (--github) or add it to .gitlab-ci.yml
    (--gitlab); docs/ci.md explains each step.
    """
    click.echo(ci_template(kind), nl=False)
