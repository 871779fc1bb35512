"""A push webhook from a team-knowledge repository refreshes every served repository whose
knowledge root follows it, at once rather than on the next scheduled fetch."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from helpers import git, repo_factory, sign, until
from web import running

from kbc.domain.knowledge_roots import KnowledgeRoot
from kbc.domain.settings import Settings
from kbc.domain.workspace import RepositoryEntry
from kbc.services.components import Components
from kbc.services.workspace import Workspace

SECRET = "a-webhook-secret-for-the-tests"
CODE = {
    "shop/__init__.py": '"""A shop."""\n',
    "shop/payouts.py": "def schedule_payout(seller):\n    return seller\n",
}
NOTES = {"domain/payouts.md": "# Payouts\n\nA payout is money we send to a seller, weekly.\n"}
TASK = "which bank holiday rule moves a payout to the next working day"


@pytest.mark.slow
def test_a_push_to_a_knowledge_repository_refreshes_the_repositories_that_read_it(tmp_path: Path) -> None:
    make = repo_factory(tmp_path)
    code, notes = make(CODE), make(NOTES)
    remote = tmp_path / "notes.git"
    git(tmp_path, "clone", "-q", "--bare", str(notes), str(remote))
    git(notes, "remote", "add", "origin", str(remote))
    settings = Settings(
        embed_model="none",
        data_dir=str(tmp_path / "data"),
        webhook_secret=SECRET,
        fetch_seconds=0,  # no schedule: only the webhook brings the change in
        knowledge=(KnowledgeRoot("team", url=f"file://{remote}"),),
    )
    workspace = Workspace([RepositoryEntry("shop", str(code))], settings, components=Components.lexical())
    with running(workspace) as url:
        first = httpx.post(f"{url}/api/v1/retrieve", json={"task": TASK, "budget": 800})
        if first.status_code != 200:  # its first build was queued by that request
            until(lambda: httpx.get(f"{url}/api/v1/repositories").json()[0]["status"] == "ready")
        (notes / "domain" / "holidays.md").write_text(
            "# Bank holidays\n\nA payout due on a bank holiday moves to the next working day.\n"
        )
        git(notes, "add", "-A")
        git(notes, "commit", "-q", "-m", "holidays")
        git(notes, "push", "-q", "origin", "HEAD")
        branch = git(notes, "symbolic-ref", "--short", "HEAD").strip()
        body = json.dumps(
            {
                "ref": f"refs/heads/{branch}",
                "after": git(notes, "rev-parse", "HEAD").strip(),
                "repository": {"clone_url": f"file://{remote}", "full_name": "acme/notes"},
            }
        ).encode()
        hooked = httpx.post(
            f"{url}/api/v1/hooks/push",
            content=body,
            headers={"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(body, SECRET)},
        )
        assert hooked.status_code == 202 and hooked.json()["queued"] == ["shop"]

        def found() -> bool:
            reply = httpx.post(f"{url}/api/v1/retrieve", json={"task": TASK, "budget": 800})
            return reply.status_code == 200 and any(
                i["path"] == "@knowledge/team/domain/holidays.md" for i in reply.json()["items"]
            )

        assert until(found)
