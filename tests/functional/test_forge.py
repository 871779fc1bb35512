"""Pull requests for proposals: a proposal pushed to the knowledge root's remote opens a pull
request (GitHub) or merge request (GitLab) on a forge speaking their REST shape on loopback;
`kbc proposals` reports the review; a forge that fails costs the proposal nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from forge_server import Forge, forge_server
from helpers import LEXICAL, RepoFactory, git

from kbc.cli.main import cli
from kbc.domain.errors import KbcError
from kbc.domain.settings import Settings, load_settings
from kbc.serve.metrics import Metrics
from kbc.services.components import Components
from kbc.services.forge import forge_from
from kbc.services.knowledge import KnowledgeBase

CODE = {
    "shop/__init__.py": '"""A shop."""\n',
    "shop/payouts.py": '''
        """Payouts to sellers."""


        def schedule_payout(seller, amount_cents):
            """Schedule a payout of an amount in cents."""
            return {"seller": seller, "amount": amount_cents}
    ''',
}
KNOWLEDGE = {"domain/payouts.md": "# Payouts\n\nA payout is money we send to a seller, weekly.\n"}
TOKEN = "forge-token-1"


@pytest.fixture
def repo(make_repo: RepoFactory, tmp_path: Path) -> Path:
    """A repository built with a knowledge root cloned from a remote (origin.git)."""
    source = make_repo(KNOWLEDGE)
    origin = tmp_path / "origin.git"
    git(source, "clone", "-q", "--bare", str(source), str(origin))
    clone = tmp_path / "knowledge"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    root = make_repo(CODE)
    built = CliRunner().invoke(
        cli, [*LEXICAL, "build", str(root), "--no-llm", "--knowledge", f"team={clone}"]
    )
    assert built.exit_code == 0, built.output
    return root


def run(root: Path, forge: Forge | None, *args: str, token: str = TOKEN, input: str | None = None) -> Result:
    options = (
        []
        if forge is None
        else [
            "-c",
            f"forge.kind={forge.kind}",
            "-c",
            f"forge.api_base={forge.url}",
            "-c",
            f"forge.repository={forge.repository}",
        ]
    )
    return CliRunner().invoke(
        cli, [*LEXICAL, *options, *args, "--repo", str(root)], input=input, env={"KBC_FORGE_TOKEN": token}
    )


def propose(root: Path, forge: Forge | None, text: str, **kwargs: str) -> Result:
    return run(
        root,
        forge,
        "propose",
        "domain/payouts.md",
        "--content",
        "-",
        "--rationale",
        "Payouts moved to Mondays.\n\nThe batch job changed in shop/payouts.py.",
        "--author",
        "agent-7",
        "--format",
        "json",
        input=f"# Payouts\n\n{text}\n",
        **kwargs,
    )


@pytest.mark.slow
def test_a_pushed_proposal_opens_a_pull_request_and_its_review_is_reported(repo: Path) -> None:
    with forge_server("github", "acme/kn", TOKEN) as forge:
        made = propose(repo, forge, "A payout is sent every Monday.")
        assert made.exit_code == 0, made.output
        proposal = json.loads(made.stdout)
        (opened,) = forge.writes()
        assert (opened.method, opened.path) == ("POST", "/repos/acme/kn/pulls")
        assert opened.headers["Authorization"] == f"Bearer {TOKEN}"
        assert opened.body["head"] == proposal["branch"] == f"kbc/proposal-{proposal['id']}"
        assert opened.body["base"] == "main" and opened.body["title"] == "Proposed: domain/payouts.md"
        assert opened.body["body"].startswith("Payouts moved to Mondays.\n\nThe batch job changed")
        assert "agent-7" in opened.body["body"] and proposal["commit"][:12] in opened.body["body"]
        assert proposal["pushed"] and proposal["request"] == "https://github.test/acme/kn/pull/1"
        assert proposal["review"] == "#1 open, awaiting review" and not proposal["request_error"]

        def listed() -> str:
            result = run(repo, forge, "proposals")
            assert result.exit_code == 0, result.output
            return result.stdout

        assert "[#1 open, awaiting review https://github.test/acme/kn/pull/1]" in listed()
        forge.review(1, "lead", "CHANGES_REQUESTED")
        assert "#1 open, changes requested" in listed()
        forge.review(1, "lead", "APPROVED")  # the same reviewer's later word counts
        assert "#1 open, approved" in listed()
        data = json.loads(run(repo, forge, "proposals", "--format", "json").stdout)
        assert data[0]["review"] == "#1 open, approved"
        # asked again for the same branch, the forge says it exists: the open request is given back
        assert (
            forge_from(
                Settings(
                    forge_kind="github",
                    forge_api_base=forge.url,
                    forge_repository="acme/kn",
                    forge_token=TOKEN,
                )
            )
            .open_request(  # type: ignore[union-attr]
                proposal["branch"], "main", "again", ""
            )
            .number
            == 1
        )
        closed = run(repo, forge, "proposals", "close", proposal["id"])
        assert closed.exit_code == 0, closed.output
        assert forge.requests[1]["state"] == "closed" and forge.writes()[-1].method == "PATCH"


@pytest.mark.slow
def test_gitlab_merge_requests_are_opened_read_and_closed(repo: Path) -> None:
    with forge_server("gitlab", "acme/team/kn", TOKEN) as forge:
        made = propose(repo, forge, "A payout is sent every Monday.")
        assert made.exit_code == 0, made.output
        proposal = json.loads(made.stdout)
        (opened,) = forge.writes()
        assert opened.path == "/projects/acme%2Fteam%2Fkn/merge_requests"
        assert opened.headers["Private-Token"] == TOKEN
        assert (opened.body["source_branch"], opened.body["target_branch"]) == (proposal["branch"], "main")
        assert opened.body["description"].startswith("Payouts moved to Mondays.")
        assert proposal["request"].endswith("/acme/team/kn/-/merge_requests/1")
        forge.approve(1, "lead")
        assert "#1 open, approved" in run(repo, forge, "proposals").stdout
        forge.merge(1)
        # merged on the forge before the knowledge root fetched it: the request says so
        listed = json.loads(run(repo, forge, "proposals", "--format", "json").stdout)
        assert listed[0]["review"] == "#1 merged"
        second = json.loads(propose(repo, forge, "Every second Monday.").stdout)
        assert run(repo, forge, "proposals", "close", second["id"]).exit_code == 0
        assert forge.requests[2]["state"] == "closed"
        assert forge.writes()[-1].body == {"state_event": "close"}


@pytest.mark.slow
def test_a_forge_that_fails_costs_the_proposal_nothing(repo: Path, make_repo: RepoFactory) -> None:
    with forge_server("github", "acme/kn", TOKEN) as forge:
        refused = propose(repo, forge, "Refused.", token="wrong")
        assert refused.exit_code == 0, refused.output
        proposal = json.loads(refused.stdout)
        assert proposal["pushed"] and not proposal["request"]
        error = proposal["request_error"]
        assert "401" in error and "check forge.token (KBC_FORGE_TOKEN)" in error
        assert f"the branch {proposal['branch']} is pushed" in proposal["request_error"]
        text = run(
            repo,
            forge,
            "propose",
            "domain/payouts.md",
            "--content",
            "-",
            "--rationale",
            "r",
            "--author",
            "a",
            token="wrong",
            input="# Payouts\n\nText.\n",
        )
        assert text.exit_code == 0 and "warning: no request opened: github answered 401" in text.stderr
        listed = run(repo, forge, "proposals", token="wrong")
        assert listed.exit_code == 0 and listed.stdout.count("[request not read: github answered 401") == 2
        url = forge.url
    gone = propose(repo, None, "Unreachable.", token=TOKEN)  # no forge configured: as before
    assert gone.exit_code == 0 and json.loads(gone.stdout)["request"] == ""
    down = CliRunner().invoke(
        cli,
        [
            *LEXICAL,
            "-c",
            "forge.kind=github",
            "-c",
            f"forge.api_base={url}",
            "-c",
            "forge.repository=acme/kn",
            "propose",
            "domain/payouts.md",
            "--content",
            "-",
            "--rationale",
            "r",
            "--author",
            "a",
            "--format",
            "json",
            "--repo",
            str(repo),
        ],
        input="# Payouts\n\nDown.\n",
        env={"KBC_FORGE_TOKEN": TOKEN},
    )
    assert down.exit_code == 0, down.output
    assert "did not answer" in json.loads(down.stdout)["request_error"]


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"forge_kind": "bitbucket", "forge_repository": "a/b", "forge_token": "t"}, "not one kbc knows"),
        ({"forge_kind": "github", "forge_repository": "a/b"}, "forge.token (or KBC_FORGE_TOKEN) is not set"),
        ({"forge_kind": "gitlab", "forge_token": "t"}, "forge.repository is not set"),
        (
            {
                "forge_kind": "github",
                "forge_repository": "a/b",
                "forge_token": "t",
                "forge_api_base": "http://forge.example.com",
            },
            "would send the token unencrypted",
        ),
    ],
)
def test_a_forge_half_configured_is_a_clear_error(settings: dict[str, str], said: str) -> None:
    with pytest.raises(KbcError, match=re.escape(said)):
        forge_from(Settings(**settings))  # type: ignore[arg-type]


def test_a_repository_cannot_name_the_forge(repo: Path) -> None:
    (repo / "kbc.toml").write_text(
        '[forge]\nkind = "github"\napi_base = "http://127.0.0.1:9"\nrepository = "attacker/kn"\n',
        encoding="utf-8",
    )
    made = propose(repo, None, "Stays here.")
    assert made.exit_code == 0, made.output
    assert json.loads(made.stdout)["request_error"] == ""
    assert "forge.api_base = 'http://127.0.0.1:9' ignored" in made.stderr


def served(repo: Path, forge: Forge) -> KnowledgeBase:
    """The knowledge base a server keeps open over ``repo``, with ``forge`` configured."""
    assignments = [
        f"forge.kind={forge.kind}",
        f"forge.api_base={forge.url}",
        f"forge.repository={forge.repository}",
    ]
    settings = load_settings(
        repo, assignments=["index.embed_model=none", *assignments], env={"KBC_FORGE_TOKEN": TOKEN}
    )
    return KnowledgeBase(repo, settings=settings, components=Components.lexical())


@pytest.mark.slow
def test_a_server_asks_the_forge_once_for_many_listings_and_never_for_a_scrape(repo: Path) -> None:
    with forge_server("github", "acme/kn", TOKEN) as forge:
        assert propose(repo, forge, "A payout is sent every Monday.").exit_code == 0
        kb = served(repo, forge)
        before = len(forge.calls)
        for _ in range(10):
            (listed,) = kb.proposals.all()
            assert listed.review == "#1 open, awaiting review"
        asked = len(forge.calls) - before
        assert asked <= 2  # the branch's request and its reviews, once
        Metrics(kb).exposition()
        assert len(forge.calls) - before == asked  # a metrics scrape counts the branches alone


@pytest.mark.slow
def test_a_request_closed_on_the_forge_closes_its_proposal(repo: Path) -> None:
    with forge_server("github", "acme/kn", TOKEN) as forge:
        proposal = json.loads(propose(repo, forge, "A payout is sent every Monday.").stdout)
        forge.requests[1]["state"] = "closed"
        (listed,) = json.loads(run(repo, forge, "proposals", "--format", "json").stdout)
        assert (listed["id"], listed["status"], listed["review"]) == (proposal["id"], "closed", "#1 closed")


@pytest.mark.slow
def test_what_a_forge_says_is_shown_without_the_token_or_terminal_escapes(repo: Path) -> None:
    with forge_server("github", "acme/kn", TOKEN) as forge:
        assert propose(repo, forge, "A payout is sent every Monday.").exit_code == 0
        forge.requests[1]["html_url"] = "https://github.test/acme/kn/pull/1\x1b]0;pwned\x07\x1b[2J"
        listed = run(repo, forge, "proposals")
        assert listed.exit_code == 0 and "\x1b" not in listed.stdout and "\x07" not in listed.stdout
        assert "#1 open" in listed.stdout
        forge.echo = True  # every call refused, the refusal quoting the token
        refused = propose(repo, forge, "Every second Monday.")
        assert refused.exit_code == 0, refused.output
        error = json.loads(refused.stdout)["request_error"]
        assert "401" in error and "Bad credentials: ***" in error and TOKEN not in refused.output
        again = run(repo, forge, "proposals")
        assert "401" in again.stdout and TOKEN not in again.output


@pytest.mark.slow
def test_a_forge_that_hangs_holds_one_listing_and_no_other_request(repo: Path) -> None:
    import threading

    import httpx
    from web import running

    with forge_server("github", "acme/kn", TOKEN) as forge:
        assert propose(repo, forge, "A payout is sent every Monday.").exit_code == 0
        kb = served(repo, forge)
        with running(kb) as url:
            forge.gate = threading.Event()  # the forge takes every GET and answers none
            first: list[httpx.Response] = []
            waiting = threading.Thread(
                target=lambda: first.append(httpx.get(f"{url}/api/v1/proposals", timeout=120))
            )
            waiting.start()
            assert forge.arrived.wait(timeout=60)
            others: list[httpx.Response] = []

            def listing() -> None:
                others.append(httpx.get(f"{url}/api/v1/proposals", timeout=60))

            threads = [threading.Thread(target=listing) for _ in range(5)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=90)
            task = {"task": "when are payouts scheduled", "budget": 600}
            sliced = httpx.post(f"{url}/api/v1/retrieve", json=task, timeout=60)
            assert not first and waiting.is_alive()  # still held by the forge
            assert len(others) == 5 and all(r.status_code == 200 for r in others)
            assert all("still answering another listing" in r.json()[0]["request_error"] for r in others)
            assert sliced.status_code == 200 and sliced.json()["items"]
            forge.gate.set()
            waiting.join(timeout=60)
        assert first[0].status_code == 200 and first[0].json()[0]["review"] == "#1 open, awaiting review"
