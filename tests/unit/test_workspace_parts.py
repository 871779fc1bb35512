"""Which repositories a workspace serves: ``--repo`` entries, ``[[repositories]]`` tables in the
user's configuration only, monorepo sub-projects, and push webhooks' signatures and payloads."""

from __future__ import annotations

import hashlib
import hmac
import time
from pathlib import Path

import pytest

from kbc.domain.errors import ConfigError, FieldError, KbcError, StoreError
from kbc.domain.settings import Settings, load_settings
from kbc.domain.workspace import RepositoryEntry, repository_entry
from kbc.serve.hooks import push_of, verified
from kbc.services.members import RETRY_MOST_SECONDS, expand, retry_after
from kbc.services.workspace import Workspace


def test_repo_entries_name_folders_and_urls() -> None:
    errors: list[FieldError] = []
    assert repository_entry("click=/src/click", "--repo", errors) == RepositoryEntry("click", "/src/click")
    assert repository_entry("/src/requests/", "--repo", errors) == RepositoryEntry(
        "requests", "/src/requests/"
    )
    assert repository_entry("https://git.example.org/acme/shop.git", "--repo", errors) == RepositoryEntry(
        "shop", url="https://git.example.org/acme/shop.git"
    )
    assert repository_entry("git@host:team/api.git", "--repo", errors) == RepositoryEntry(
        "api", url="git@host:team/api.git"
    )
    assert not errors
    assert repository_entry("bad name=/x", "--repo", errors) is None
    assert errors and "not a usable name" in errors[0].problem


def test_repositories_come_from_the_users_configuration_only(tmp_path: Path) -> None:
    user = tmp_path / "config.toml"
    user.write_text(
        '[[repositories]]\nurl = "https://git.example.org/a/shop.git"\nbranch = "main"\n'
        '[[repositories]]\nname = "mono"\npath = "/src/mono"\nprojects = ["services/*"]\n'
        '[serve]\nfetch_seconds = 5\nwebhook_secret = "s3cret-s3cret"\n',
        encoding="utf-8",
    )
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "kbc.toml").write_text(
        '[serve]\nwebhook_secret = "from-the-repository"\nmax_open = 99\n', encoding="utf-8"
    )
    settings = load_settings(repo, env={"KBC_CONFIG": str(user)})
    assert [r.name for r in settings.repositories] == ["shop", "mono"]
    assert settings.repositories[0].branch == "main" and settings.repositories[1].projects == ("services/*",)
    assert (settings.fetch_seconds, settings.webhook_secret, settings.max_open) == (5, "s3cret-s3cret", 24)
    assert any("serve.webhook_secret = '…' ignored" in n for n in settings.notices)
    assert "s3cret" not in repr(settings)

    (repo / "kbc.toml").write_text('[[repositories]]\npath = "/etc"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="repositories"):
        load_settings(repo, env={"KBC_CONFIG": ""})


def test_a_table_needs_one_place(tmp_path: Path) -> None:
    user = tmp_path / "config.toml"
    user.write_text('[[repositories]]\nname = "x"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="exactly one of path and url"):
        load_settings(tmp_path, env={"KBC_CONFIG": str(user)})


def test_a_monorepos_projects_are_repositories_of_their_own(tmp_path: Path) -> None:
    for folder in ("services/billing", "services/search", "libs/core", "docs"):
        (tmp_path / folder).mkdir(parents=True)
    found = expand(
        [
            RepositoryEntry("mono", str(tmp_path), projects=("services/*", "libs/*")),
            RepositoryEntry("tools", "/src/tools"),
        ]
    )
    assert [e.name for e in found] == [
        "mono/libs/core",
        "mono/services/billing",
        "mono/services/search",
        "tools",
    ]
    assert found[1].path == str(tmp_path / "services" / "billing")
    with pytest.raises(KbcError, match="no folder matches"):
        expand([RepositoryEntry("mono", str(tmp_path), projects=("apps/*",))])
    with pytest.raises(KbcError, match="two repositories are named tools"):
        expand([RepositoryEntry("tools", "/a"), RepositoryEntry("tools", "/b")])


def test_webhooks_prove_themselves_with_the_shared_secret() -> None:
    body = b'{"ref": "refs/heads/main"}'
    signed = "sha256=" + hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
    assert verified({"x-hub-signature-256": signed}, body, "s3cret") == "github"
    assert verified({"x-hub-signature-256": signed}, body + b" ", "s3cret") == ""
    assert verified({"x-hub-signature-256": signed}, body, "other") == ""
    assert verified({"x-gitlab-token": "s3cret"}, body, "s3cret") == "gitlab"
    assert verified({"x-gitlab-token": "guess"}, body, "s3cret") == ""
    assert verified({}, body, "s3cret") == ""


def test_push_payloads_name_their_repository_branch_and_commit() -> None:
    github = {
        "ref": "refs/heads/main",
        "after": "a" * 40,
        "repository": {
            "clone_url": "https://github.com/pallets/click.git",
            "ssh_url": "git@github.com:pallets/click.git",
        },
    }
    assert push_of(github) == (
        ["https://github.com/pallets/click.git", "git@github.com:pallets/click.git"],
        "main",
        "a" * 40,
    )
    gitlab = {
        "ref": "refs/heads/dev",
        "after": "b" * 40,
        "project": {"git_http_url": "https://gitlab.com/acme/shop.git"},
    }
    assert push_of(gitlab) == (["https://gitlab.com/acme/shop.git"], "dev", "b" * 40)
    assert push_of({**github, "ref": "refs/tags/v1"})[1] == ""
    with pytest.raises(KbcError, match="names no repository URL"):
        push_of({"ref": "refs/heads/main"})


def test_a_failed_refresh_is_tried_again_after_a_wait_that_doubles() -> None:
    assert [retry_after(n) for n in (1, 2, 3, 4)] == [30, 60, 120, 240]
    assert retry_after(12) == retry_after(10_000) == RETRY_MOST_SECONDS


def test_a_failed_repository_waits_for_its_retry_on_use_and_on_schedule(tmp_path: Path) -> None:
    url = "https://me:pa55word@git.example.org/acme/shop.git"
    workspace = Workspace([RepositoryEntry("shop", url=url)], Settings(data_dir=str(tmp_path)))
    try:
        assert workspace.scheduled() == ["shop"]
        member = workspace.member("shop")
        member.failed(
            "cannot follow https://me:***@git.example.org/acme/shop.git: no answer", time.monotonic()
        )
        assert workspace.scheduled() == []
        with pytest.raises(StoreError, match="failed to build .*no answer.*retried after") as refused:
            with workspace.using("shop"):
                pass
        assert "MCP refresh" in refused.value.hint
        assert workspace.waiting() == 0  # nothing queued: the clone is not tried on each request
        listed = workspace.listing()[0]
        assert listed["status"] == "failed" and listed["retry_at"].endswith("Z")
        assert "pa55word" not in str(listed)
        member.retry_at = time.monotonic() - 1  # its wait is over
        assert workspace.scheduled() == ["shop"]
        with pytest.raises(StoreError, match="is being built"), workspace.using("shop"):
            pass
        assert workspace.waiting() == 1
    finally:
        workspace.close()
