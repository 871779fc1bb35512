"""Knowledge roots beside the code: a knowledge repository with scopes, indexed with a code
repository; retrieval reads the scopes it is given; a repository cannot point kbc elsewhere."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import LEXICAL, RepoFactory, git, write_tree

from kbc.cli.main import cli
from kbc.domain.errors import KbcError, PathRefused
from kbc.domain.knowledge_roots import KnowledgeRoot
from kbc.domain.settings import Settings, load_settings
from kbc.services.components import Components
from kbc.services.knowledge import KnowledgeBase
from kbc.services.reads import FileLines, ScopeSummary

SECRET = "2hpChYgCfrL1spNxnyVmihA+2O76UMFxFkM+R5Kj"
CODE = {
    "shop/__init__.py": '"""A shop."""\n',
    "shop/payouts.py": '''
        """Payouts to sellers."""


        def schedule_payout(seller, amount_cents):
            """Schedule a payout of an amount in cents."""
            return {"seller": seller, "amount": amount_cents}
    ''',
}
KNOWLEDGE = {
    "README.md": "# Team knowledge\n\nHow we work.\n",
    "domain/payouts.md": "# Payouts\n\nA payout is money we send to a seller, weekly, never before "
    "the refund window of 180 days has closed for the orders it pays.\n",
    "conventions/money.md": "---\nscope: [conventions, payments]\n---\n# Money\n\nMoney is never a float: "
    "amounts are integers in cents.\n",
    "projects/shop/notes.md": "# Shop notes\n\nThe shop's payout batch runs on Mondays at 06:00 UTC.\n",
    "projects/ledger/notes.md": "# Ledger notes\n\nThe ledger's zebra reconciliation runs nightly.\n",
    "ops/keys.md": f'# Keys\n\naws_secret_access_key = "{SECRET}"\n',
    "domain/diagram.txt": "not Markdown, not indexed\n",
}


@pytest.fixture
def team(make_repo: RepoFactory) -> Path:
    return make_repo(KNOWLEDGE)


@pytest.fixture
def shop(make_repo: RepoFactory, team: Path) -> tuple[Path, Settings]:
    root = make_repo(CODE)
    settings = Settings(embed_model="none", knowledge=(KnowledgeRoot("team", str(team)),))
    return root, settings


def open_kb(root: Path, settings: Settings) -> KnowledgeBase:
    return KnowledgeBase(root, settings=settings, components=Components.lexical())


def test_documents_are_indexed_in_their_scopes(shop: tuple[Path, Settings]) -> None:
    root, settings = shop
    with open_kb(root, settings) as kb:
        built = kb.build(no_llm=True)
        scopes = {s.scope: s for s in kb.reads.scopes()}
    assert (built.knowledge.roots, built.knowledge.documents) == (1, 6)
    assert {name: s.documents for name, s in scopes.items()} == {
        "conventions": 1,
        "domain": 1,
        "ops": 1,
        "payments": 1,
        "projects/ledger": 1,
        "projects/shop": 1,
        "team": 1,
    }
    assert [name for name, s in scopes.items() if not s.default] == ["projects/ledger", "projects/shop"]
    assert all(s.roots == ("team",) for s in scopes.values())


def test_a_slice_mixes_code_and_team_knowledge_within_its_scopes(shop: tuple[Path, Settings]) -> None:
    root, settings = shop
    with open_kb(root, settings) as kb:
        kb.build(no_llm=True)
        mixed = kb.retrieve("schedule a payout to a seller in cents", budget=2000)
        paths = [item.path for item in mixed.items]
        assert "shop/payouts.py" in paths and "@knowledge/team/domain/payouts.md" in paths
        assert "@knowledge/team/conventions/money.md" in paths
        assert "@knowledge/team/domain/payouts.md:1-" in mixed.text
        # one project's notes never reach a slice that does not ask for that project
        assert not any(p.startswith("@knowledge/team/projects/") for p in paths)
        ledger = kb.retrieve("zebra reconciliation", budget=2000, scopes=["projects/ledger"])
        ledger_notes = "@knowledge/team/projects/ledger/notes.md"
        assert [i.path for i in ledger.items if i.kind == "knowledge"] == [ledger_notes]
        only = kb.retrieve("payout money cents seller", budget=2000, scopes=["conventions"])
        money = "@knowledge/team/conventions/money.md"
        assert {i.path for i in only.items if i.kind == "knowledge"} == {money}
        with pytest.raises(KbcError, match="no knowledge scope named 'nope'"):
            kb.retrieve("payout", scopes=["nope"])


def test_knowledge_documents_are_served_redacted_and_confined(shop: tuple[Path, Settings]) -> None:
    root, settings = shop
    with open_kb(root, settings) as kb:
        kb.build(no_llm=True)
        lines = kb.reads.file("@knowledge/team/domain/payouts.md", 1, 1)
        assert lines == FileLines(
            path="@knowledge/team/domain/payouts.md", start_line=1, end_line=1, lines=3, text="# Payouts\n"
        )
        keys = kb.reads.file("@knowledge/team/ops/keys.md")  # redacted, as a repository file holding one is
        assert SECRET not in keys.text and "[REDACTED]" in keys.text
        hits = kb.search("aws secret access key", scopes=["ops"])
        assert hits and all(SECRET not in hit.text for hit in hits)
        for path in (
            "@knowledge/team/../../etc/passwd",
            "@knowledge/team/domain/diagram.txt",
            "@knowledge/other/domain/payouts.md",
        ):
            with pytest.raises(PathRefused):
                kb.reads.file(path)


def test_the_cli_builds_with_a_root_and_lists_its_scopes(make_repo: RepoFactory, team: Path) -> None:
    root = make_repo(CODE)
    built = CliRunner().invoke(cli, [*LEXICAL, "build", str(root), "--no-llm", "--knowledge", f"team={team}"])
    assert built.exit_code == 0, built.output
    assert "documents     6 from 1 root, 7 scopes" in built.output
    listed = CliRunner().invoke(cli, [*LEXICAL, "scopes", "--repo", str(root), "--format", "json"])
    assert {s["scope"] for s in json.loads(listed.output)} >= {"domain", "projects/shop"}
    # the store remembers the roots: a retrieve needs no --knowledge
    sliced = CliRunner().invoke(
        cli,
        [
            *LEXICAL,
            "retrieve",
            "the shop payout batch",
            "--repo",
            str(root),
            "--scope",
            "projects/shop",
            "--format",
            "json",
        ],
    )
    assert sliced.exit_code == 0, sliced.output
    assert "@knowledge/team/projects/shop/notes.md" in {i["path"] for i in json.loads(sliced.output)["items"]}
    # a refresh keeps the roots the store was built with; --knowledge none forgets them
    kept = CliRunner().invoke(cli, [*LEXICAL, "refresh", str(root), "--no-llm"])
    assert kept.exit_code == 0, kept.output
    counted = CliRunner().invoke(cli, [*LEXICAL, "scopes", "--repo", str(root), "--format", "json"])
    assert len(json.loads(counted.output)) == 7
    forgotten = CliRunner().invoke(cli, [*LEXICAL, "build", str(root), "--no-llm", "--knowledge", "none"])
    assert forgotten.exit_code == 0, forgotten.output
    assert "No knowledge scopes" in CliRunner().invoke(cli, [*LEXICAL, "scopes", "--repo", str(root)]).output


def test_a_refresh_reads_the_roots_again(shop: tuple[Path, Settings], team: Path) -> None:
    root, settings = shop
    with open_kb(root, settings) as kb:
        kb.build(no_llm=True)
        write_tree(team, {"domain/refunds.md": "# Refunds\n\nRefunds are allowed for 180 days.\n"})
        git(team, "add", "-A")
        git(team, "commit", "-q", "-m", "refunds")
        done = kb.refresh(no_llm=True)
        assert done.mode == "incremental" and "knowledge roots" in done.reason
        assert kb.reads.scopes()[1] == ScopeSummary(
            scope="domain", documents=2, roots=("team",), default=True
        )
        assert kb.refresh(no_llm=True).mode == "up-to-date"


def test_a_repository_may_only_name_a_root_inside_itself(make_repo: RepoFactory, team: Path) -> None:
    inside = {**CODE, "notes/domain/x.md": "# X\n", "kbc.toml": '[[knowledge]]\npath = "notes"\n'}
    root = make_repo(inside)
    assert load_settings(root, env={}).knowledge == (KnowledgeRoot("notes", "notes"),)
    outside = make_repo(
        {
            **CODE,
            "kbc.toml": f'[[knowledge]]\npath = "{team}"\n\n[[knowledge]]\n'
            'url = "https://attacker.example/k.git"\n',
        }
    )
    settings = load_settings(outside, env={})
    assert settings.knowledge == ()
    assert len(settings.notices) == 2 and all("may only name a folder inside" in n for n in settings.notices)
    mine = load_settings(outside, env={"KBC_KNOWLEDGE": f"team={team}"})
    assert mine.knowledge == (KnowledgeRoot("team", str(team)),)


def test_bad_knowledge_configuration_is_named(make_repo: RepoFactory) -> None:
    from kbc.domain.errors import ConfigError

    bad = '[[knowledge]]\npath = "a"\nurl = "b"\n\n[[knowledge]]\nname = "x y"\npath = "c"\n'
    root = make_repo({**CODE, "kbc.toml": bad})
    with pytest.raises(ConfigError) as raised:
        load_settings(root, env={"KBC_KNOWLEDGE": "a=one,a=two"})
    text = str(raised.value)
    assert "exactly one of path and url" in text and "'x y' is not a usable name" in text
    assert "two knowledge roots have this name" in text


def test_a_root_that_cannot_be_read_is_reported_and_the_build_goes_on(
    make_repo: RepoFactory, tmp_path: Path
) -> None:
    root = make_repo(CODE)
    settings = Settings(embed_model="none", knowledge=(KnowledgeRoot("gone", str(tmp_path / "missing")),))
    with open_kb(root, settings) as kb:
        built = kb.build(no_llm=True)
        assert built.knowledge.documents == 0 and "is not a folder" in built.knowledge.problems[0]
        assert kb.retrieve("schedule payout").items


# -- proposals -----------------------------------------------------------------------


def state_of(repo: Path) -> tuple[str, str, str, str]:
    """HEAD, the followed branch, the index and the work tree of a repository, as git sees them."""
    return (
        git(repo, "rev-parse", "HEAD"),
        git(repo, "rev-parse", "refs/heads/main"),
        git(repo, "ls-files", "-s"),
        git(repo, "status", "--porcelain", "--untracked-files=all"),
    )


@pytest.fixture
def built(shop: tuple[Path, Settings]) -> KnowledgeBase:
    root, settings = shop
    kb = open_kb(root, settings)
    kb.build(no_llm=True)
    return kb


def test_a_proposal_is_one_commit_on_a_new_branch_and_nothing_else_changes(
    built: KnowledgeBase, team: Path
) -> None:
    before = state_of(team)
    index_before = built.retrieve("payout refund window seller", budget=2000).fingerprint
    text = KNOWLEDGE["domain/payouts.md"].replace("weekly", "every Monday")
    proposal = built.proposals.propose(
        "domain/payouts.md", content=text, rationale="Payouts run on Mondays now.", author="agent-7"
    )
    assert proposal.status == "open" and proposal.branch == f"kbc/proposal-{proposal.id}"
    assert state_of(team) == before  # HEAD, main, the index and the work tree are as they were
    assert git(team, "rev-list", "--count", f"main..{proposal.branch}").strip() == "1"
    assert git(team, "rev-parse", f"{proposal.branch}^").strip() == before[1].strip()
    assert git(team, "show", f"{proposal.branch}:domain/payouts.md") == text
    assert git(team, "diff", "--name-only", "main", proposal.branch).split() == ["domain/payouts.md"]
    message = git(team, "log", "-1", "--format=%an%n%B", proposal.branch)
    assert message.startswith("agent-7\nProposed: domain/payouts.md\n\nPayouts run on Mondays now.")
    assert built.retrieve("payout refund window seller", budget=2000).fingerprint == index_before
    assert [(p.id, p.status) for p in built.proposals.all()] == [(proposal.id, "open")]


def test_a_second_proposal_on_the_same_document_is_a_branch_of_its_own(
    built: KnowledgeBase, team: Path
) -> None:
    first = built.proposals.propose(
        "domain/payouts.md", content="# Payouts\n\nWeekly.\n", rationale="shorter", author="a"
    )
    diff = (
        "--- a/domain/payouts.md\n+++ b/domain/payouts.md\n@@ -1,3 +1,5 @@\n # Payouts\n \n"
        f" {KNOWLEDGE['domain/payouts.md'].splitlines()[2]}\n+\n+Payouts are in cents.\n"
    )
    second = built.proposals.propose(
        "@knowledge/team/domain/payouts.md", diff=diff, rationale="cents", author="b"
    )
    assert first.branch != second.branch
    assert git(team, "show", f"{second.branch}:domain/payouts.md").endswith("\nPayouts are in cents.\n")
    assert git(team, "rev-parse", f"{second.branch}^").strip() == git(team, "rev-parse", "main").strip()
    assert {p.id for p in built.proposals.all()} == {first.id, second.id}


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("../code/shop/payouts.py", "climb out"),
        ("/etc/passwd.md", "relative to the knowledge root"),
        ("domain/diagram.txt", "only Markdown"),
        (".git/config.md", "hidden folders"),
        ("@knowledge/other/domain/payouts.md", "no knowledge root named 'other'"),
    ],
)
def test_paths_outside_the_roots_markdown_are_refused(built: KnowledgeBase, path: str, words: str) -> None:
    with pytest.raises(PathRefused, match=words):
        built.proposals.propose(path, content="# x\n", rationale="r", author="a")


def test_planted_credentials_are_redacted_before_the_commit(built: KnowledgeBase, team: Path) -> None:
    leaked = f'# Deploy\n\naws_secret_access_key = "{SECRET}"\n'
    proposal = built.proposals.propose("ops/deploy.md", content=leaked, rationale="new page", author="a")
    committed = git(team, "show", f"{proposal.branch}:ops/deploy.md")
    assert SECRET not in committed and "[REDACTED]" in committed and proposal.redacted == 1
    assert SECRET not in git(team, "cat-file", "-p", proposal.commit)


def test_merged_and_closed_proposals_are_told_apart(built: KnowledgeBase, team: Path) -> None:
    merged = built.proposals.propose(
        "domain/payouts.md", content="# Payouts\n\nMerged text.\n", rationale="m", author="a"
    )
    closed = built.proposals.propose(
        "conventions/money.md", content="# Money\n\nClosed.\n", rationale="c", author="b"
    )
    git(team, "merge", "-q", "--no-edit", merged.branch)
    assert built.proposals.close(closed.id).status == "closed"
    assert {p.id: p.status for p in built.proposals.all()} == {merged.id: "merged", closed.id: "closed"}
    assert git(team, "branch", "--list", closed.branch).strip() == ""
    shown, diff = built.proposals.get(merged.id)
    assert shown.rationale == "m" and "+Merged text." in diff


def test_a_proposal_is_pushed_to_the_remote(make_repo: RepoFactory, tmp_path: Path) -> None:
    origin = tmp_path / "origin.git"
    source = make_repo(KNOWLEDGE)
    git(source, "clone", "-q", "--bare", str(source), str(origin))
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    root = make_repo(CODE)
    settings = Settings(embed_model="none", knowledge=(KnowledgeRoot("team", str(clone)),))
    with open_kb(root, settings) as kb:
        kb.build(no_llm=True)
        proposal = kb.proposals.propose(
            "domain/payouts.md", content="# Payouts\n\nPushed.\n", rationale="p", author="a"
        )
    assert proposal.pushed
    assert git(origin, "rev-parse", f"refs/heads/{proposal.branch}").strip() == proposal.commit
    assert git(origin, "rev-parse", "refs/heads/main").strip() == git(source, "rev-parse", "HEAD").strip()


def test_the_cli_proposes_and_lists(shop: tuple[Path, Settings], team: Path) -> None:
    root, _ = shop
    CliRunner().invoke(cli, [*LEXICAL, "build", str(root), "--no-llm", "--knowledge", f"team={team}"])
    made = CliRunner().invoke(
        cli,
        [
            *LEXICAL,
            "propose",
            "domain/payouts.md",
            "--repo",
            str(root),
            "--content",
            "-",
            "--rationale",
            "why",
            "--author",
            "me",
            "--format",
            "json",
        ],
        input="# Payouts\n\nFrom stdin.\n",
    )
    assert made.exit_code == 0, made.output
    proposal = json.loads(made.output)
    listed = CliRunner().invoke(cli, [*LEXICAL, "proposals", "--repo", str(root)])
    assert f"{proposal['id']}  open" in listed.output
    shown = CliRunner().invoke(cli, [*LEXICAL, "proposals", "show", proposal["id"], "--repo", str(root)])
    assert "+From stdin." in shown.output


# -- drift across repositories ------------------------------------------------------------


def commit_later(repo: Path, files: dict[str, str], when: str) -> None:
    """Commit ``files`` in ``repo`` at ``when`` (after every fixture commit)."""
    import os
    import subprocess

    from helpers import GIT_ENV

    write_tree(repo, files)
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "later"], check=True, env=env)


GOVERNING = {
    "domain/payout-rules.md": '---\nrefs: ["repo:shop/payouts.py"]\n---\n# Payout rules\n\n'
    "Payouts go through `shop.payouts.schedule_payout` and "
    "`shop.payouts.cancel_payout`.\n"
}


def test_knowledge_behind_the_code_is_reported_and_proposed(make_repo: RepoFactory) -> None:
    team = make_repo({**KNOWLEDGE, **GOVERNING})
    root = make_repo(CODE)
    settings = Settings(embed_model="none", knowledge=(KnowledgeRoot("team", str(team)),))
    held = textwrap.dedent(CODE["shop/payouts.py"]).lstrip("\n")
    held += "\n\ndef hold(seller):\n    return seller\n"
    commit_later(root, {"shop/payouts.py": held}, "2026-03-01T00:00:00Z")
    with open_kb(root, settings) as kb:
        kb.build(no_llm=True)
        reports = {r.path: r for r in kb.reads.drift()}
        report = reports["@knowledge/team/domain/payout-rules.md"]
        kinds = {r.kind: r for r in report.reasons}
        changed = kinds["code_changed"]
        assert (changed.files, changed.commits_since) == (("shop/payouts.py",), 1)
        assert kinds["missing_symbols"].names == ("shop.payouts.cancel_payout",)
        assert set(reports) == {"@knowledge/team/domain/payout-rules.md"}
        before = state_of(team)
        made = kb.proposals.propose_drift()
    assert [(p.root, p.path) for p in made] == [("team", "domain/payout-rules.md")]
    assert state_of(team) == before
    proposed = git(team, "show", f"{made[0].branch}:domain/payout-rules.md")
    assert proposed.startswith(GOVERNING["domain/payout-rules.md"].rstrip("\n"))  # the document unchanged
    assert "<!-- kbc drift:" in proposed and "  - changed: shop/payouts.py" in proposed
    assert "  - no longer in the code: shop.payouts.cancel_payout" in proposed


def test_agents_read_scopes_and_propose_over_mcp_and_rest(built: KnowledgeBase, team: Path) -> None:
    import anyio
    import httpx
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from web import running

    before = state_of(team)
    with running(built) as url:

        async def agent() -> tuple[Any, Any, Any, Any]:
            async with (
                streamable_http_client(f"{url}/mcp") as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                scopes = await session.call_tool("list_scopes", {})
                sliced = await session.call_tool(
                    "retrieve_slice", {"task": "zebra reconciliation", "scopes": ["projects/ledger"]}
                )
                made = await session.call_tool(
                    "propose_update",
                    {
                        "path": "domain/payouts.md",
                        "content": "# Payouts\n\nOver MCP.\n",
                        "rationale": "from an agent",
                        "author": "mcp-agent",
                    },
                )
                listed = await session.call_tool("list_proposals", {})
                return scopes, sliced, made, listed

        scopes, sliced, made, listed = anyio.run(agent)
        body = {
            "path": "conventions/money.md",
            "author": "bot",
            "rationale": "rest",
            "content": "# Money\n\nREST.\n",
        }
        rest = httpx.post(f"{url}/api/v1/proposals", json=body)
        assert rest.status_code == 200, rest.text
        assert len(httpx.get(f"{url}/api/v1/proposals").json()) == 2
        assert {s["scope"] for s in httpx.get(f"{url}/api/v1/scopes").json()} >= {"domain", "projects/shop"}
    assert scopes.structured_content and len(scopes.structured_content["result"]) == 7
    assert sliced.structured_content and "@knowledge/team/projects/ledger/notes.md" in {
        i["path"] for i in sliced.structured_content["items"]
    }
    assert made.structured_content and made.structured_content["status"] == "open"
    assert listed.structured_content
    assert [p["author"] for p in listed.structured_content["result"]] == ["mcp-agent"]
    assert state_of(team) == before


def test_a_root_followed_by_url_is_fetched_again_and_takes_proposals(
    make_repo: RepoFactory, tmp_path: Path
) -> None:
    """A git URL root is cloned into kbc's data folder and followed by fetch and reset; a
    proposal to it is pushed to that remote, and the remote's branch is untouched."""
    source = make_repo(KNOWLEDGE)
    origin = tmp_path / "team.git"
    git(tmp_path, "clone", "-q", "--bare", str(source), str(origin))
    root = make_repo(CODE)
    settings = Settings(
        embed_model="none",
        data_dir=str(tmp_path / "data"),
        knowledge=(KnowledgeRoot("team", url=origin.as_uri(), branch="main"),),
    )
    with open_kb(root, settings) as kb:
        kb.build(no_llm=True)
        assert [r.url for r in kb.reads.manifest().roots] == [origin.as_uri()]
        git(source, "remote", "add", "origin", str(origin))
        commit_later(
            source, {"domain/refunds.md": "# Refunds\n\nAllowed for 180 days.\n"}, "2026-04-01T00:00:00Z"
        )
        git(source, "push", "-q", "origin", "main")
        assert kb.refresh(no_llm=True).mode == "incremental"
        assert "@knowledge/team/domain/refunds.md" in kb.reads.manifest().documents
        proposal = kb.proposals.propose(
            "domain/refunds.md",
            content="# Refunds\n\nAllowed for 180 days, once.\n",
            rationale="once",
            author="a",
        )
    assert proposal.pushed
    assert git(origin, "rev-parse", f"refs/heads/{proposal.branch}").strip() == proposal.commit
    assert git(origin, "rev-parse", "refs/heads/main").strip() == git(source, "rev-parse", "main").strip()


@pytest.mark.slow
@pytest.mark.parametrize("grounded", [True, False])
def test_with_an_llm_drift_proposes_a_grounded_rewrite_marked_machine_written(
    make_repo: RepoFactory, grounded: bool
) -> None:
    from llm_server import Reply, chat_server

    from kbc.views.llm import LiteLLMInterpreter

    team = make_repo({**KNOWLEDGE, **GOVERNING})
    root = make_repo(CODE)
    settings = Settings(embed_model="none", knowledge=(KnowledgeRoot("team", str(team)),))
    held = textwrap.dedent(CODE["shop/payouts.py"]).lstrip("\n")
    commit_later(
        root, {"shop/payouts.py": held + "\n\ndef hold(seller):\n    return seller\n"}, "2026-03-01T00:00:00Z"
    )
    named = "`shop.payouts.hold`" if grounded else "`shop.payouts.release_all`"
    rewrite = (
        GOVERNING["domain/payout-rules.md"].split("Payouts go")[0]
        + f"Payouts go through `shop.payouts.schedule_payout`; {named} holds them.\n"
    )

    def reply(request: dict[str, object]) -> Reply:
        prompt = str(request["messages"][-1]["content"])  # type: ignore[index]
        assert "def hold(seller)" in prompt and "shop.payouts.cancel_payout" in prompt
        return Reply(rewrite)

    with chat_server(reply) as server, open_kb(root, settings) as kb:
        kb.build(no_llm=True)
        interpreter = LiteLLMInterpreter(
            "openai/test-model", api_base=server.url, api_key="k", timeout=20, retries=0
        )
        (made,) = kb.proposals.propose_drift(interpreter=interpreter)
    proposed = git(team, "show", f"{made.branch}:domain/payout-rules.md")
    if grounded:
        assert proposed.startswith(rewrite.rstrip("\n"))
        assert "machine-written: the text above is a suggested rewrite by openai/test-model" in proposed
        assert made.author == "kbc drift (openai/test-model)" and "Machine-written" in made.rationale
    else:  # a rewrite naming code that does not exist is not offered: the skeleton is
        assert proposed.startswith(GOVERNING["domain/payout-rules.md"].rstrip("\n"))
        assert "machine-written" not in proposed and "release_all" in made.rationale


def test_the_ui_links_knowledge_blocks_to_their_lines(built: KnowledgeBase) -> None:
    import httpx
    from web import running

    with running(built) as url:
        page = httpx.get(f"{url}/slice", params={"task": "schedule a payout to a seller in cents"}).text
        assert 'href="/source/%40knowledge/team/domain/payouts.md?start=1&amp;end=' in page
        source = httpx.get(f"{url}/source/%40knowledge/team/domain/payouts.md", params={"start": 1, "end": 1})
        assert source.status_code == 200 and '<tr id="L1" class="hl">' in source.text
        assert httpx.get(f"{url}/source/%40knowledge/team/ops/keys.md").text.count(SECRET) == 0


def test_a_repository_credential_repeated_in_a_document_is_redacted_there_too(
    make_repo: RepoFactory, tmp_path: Path
) -> None:
    token = "correct-horse-staple-91"  # nothing in the document's own words marks it
    team = make_repo(
        {
            "ops/rotation.md": f"# Rotation\n\nThe deploy bot logs in as {token} until May.\n",
            "ops/other.md": "# Other\n\nNothing secret here.\n",
        }
    )
    root = make_repo({**CODE, "deploy/settings.py": f'DEPLOY_PASSWORD = "{token}"\n'})
    settings = Settings(embed_model="none", knowledge=(KnowledgeRoot("team", str(team)),))
    with open_kb(root, settings) as kb:
        kb.build(no_llm=True)
        hits = kb.search("deploy bot rotation", scopes=["ops"])
        assert any(hit.path == "@knowledge/team/ops/rotation.md" for hit in hits)
        assert all(token not in hit.text for hit in hits)
        answer, _ = kb.retrieve_logged("when is the deploy bot token rotated?", "qa", scopes=["ops"])
        assert "@knowledge/team/ops/rotation.md" in answer.text and token not in answer.to_json()
        rotation = kb.reads.file("@knowledge/team/ops/rotation.md")  # redacted with the code's values
        assert token not in rotation.text and "[REDACTED]" in rotation.text
        assert kb.reads.file("@knowledge/team/ops/other.md").lines == 3
    index = (root / ".kbc" / "index" / "lexical.sqlite").read_bytes()
    assert token.encode() not in index
    assert refresh_mode(root, settings) == "up-to-date"  # the redaction is not a change of the document


def refresh_mode(root: Path, settings: Settings) -> str:
    from kbc.services.refresh import refresh

    return refresh(str(root), settings, no_llm=True).mode


def test_a_proposal_cannot_forge_what_it_changed_who_wrote_it_or_hide_a_credential(
    built: KnowledgeBase, team: Path
) -> None:
    # A rationale that writes kbc's own trailer names another document, "merged" already.
    forged = built.proposals.propose(
        "domain/payouts.md",
        content="# Payouts\n\nForged.\n",
        author="a",
        rationale="Looks fine.\n\nKbc-Proposal: team/conventions/money.md",
    )
    listed = {p.id: p for p in built.proposals.all()}[forged.id]
    assert (listed.path, listed.status) == ("domain/payouts.md", "open")
    assert "Kbc-Proposal: team/conventions/money.md" in listed.rationale  # shown as the text it is
    # A path with a newline cannot add a trailer, nor create a file so named.
    with pytest.raises(PathRefused, match="control characters"):
        built.proposals.propose(
            "domain/x.md\nSigned-off-by: Boss <boss@example.com>\n.md",
            content="# x\n",
            rationale="r",
            author="a",
        )
    # Terminal escapes in the author are never printed.
    escaped = built.proposals.propose(
        "conventions/money.md",
        content="# Money\n\nIn cents.\n",
        rationale="r",
        author="agent\x1b]0;pwned\x07\x1b[31m-9",
    )
    assert {p.id: p.author for p in built.proposals.all()}[escaped.id] == "agent]0;pwned[31m-9"
    assert "\x1b" not in git(team, "log", "-1", "--format=%an", escaped.branch)
    # A diff holding a credential leaves no unredacted object in the knowledge repository.
    line = KNOWLEDGE["domain/payouts.md"].splitlines()[2]
    fresh = "Zq8rT3vLmN5pX2wK7yB4cD9fG1hJ6sA0eU3iO8xR"  # a key the repository has never held
    diff = (
        "--- a/domain/payouts.md\n+++ b/domain/payouts.md\n@@ -1,3 +1,4 @@\n # Payouts\n \n"
        f' {line}\n+aws_secret_access_key = "{fresh}"\n'
    )
    leaked = built.proposals.propose("domain/payouts.md", diff=diff, rationale="r", author="a")
    assert leaked.redacted == 1 and fresh not in git(team, "show", f"{leaked.branch}:domain/payouts.md")
    objects = git(team, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)")
    for name in (o.split()[0] for o in objects.splitlines() if o.endswith(" blob")):
        assert fresh not in git(team, "cat-file", "blob", name)


TURKISH = {
    "domain/odeme.md": "# Ödeme kuralları\n\n## Yöntemler\n\nKredi kartı ve havale kabul edilir; kapıda "
    "ödeme yalnızca büyük şehirlerde sunulur.\n\n## İade süresi\n\nİade süresi "
    "teslimattan itibaren 14 gündür.\n",
    "domain/kargo.md": "# Kargo\n\n750 TL üzeri siparişlerde kargo ücretsizdir; teslim süresi iki iş "
    "günüdür.\n",
    "domain/payments.md": "# Payments\n\nCards and bank transfers are accepted; refunds go back to the "
    "card.\n",
    "conventions/kod.md": "# Kod stili\n\nKod İngilizce yazılır; her kuralın bir testi vardır.\n",
}


@pytest.mark.parametrize("question", ["odeme", "kurallari", "iade suresi", "Ödeme kuralları", "İADE SÜRESİ"])
def test_words_outside_ascii_find_their_note(make_repo: RepoFactory, question: str) -> None:
    root = make_repo(CODE)
    notes = make_repo(TURKISH)
    settings = Settings(embed_model="none", knowledge=(KnowledgeRoot("ekip", str(notes)),))
    with open_kb(root, settings) as kb:
        kb.build(no_llm=True)
        found = kb.retrieve(question, "qa", budget=3000)
    knowledge = [i.path for i in found.items if i.kind == "knowledge"]
    assert knowledge and knowledge[0] == "@knowledge/ekip/domain/odeme.md", knowledge


def test_a_question_only_team_knowledge_answers_is_no_gap(shop: tuple[Path, Settings]) -> None:
    root, settings = shop
    with open_kb(root, settings) as kb:
        kb.build(no_llm=True)
        answered = kb.retrieve("how many days is the refund window", "qa", budget=2000)
        assert any(i.path == "@knowledge/team/domain/payouts.md" for i in answered.items)
        kb.retrieve("quantum zebra flux capacitor calibration", "qa", budget=2000)
        gaps = [g.question for g in kb.queries.gaps()]
    assert gaps == ["quantum zebra flux capacitor calibration"]


def test_a_knowledge_block_is_dated_and_says_when_it_is_behind_the_code(
    make_repo: RepoFactory, tmp_path: Path
) -> None:
    team = make_repo({**KNOWLEDGE, **GOVERNING})
    root = make_repo(CODE)
    folder = tmp_path / "plain-notes"
    write_tree(folder, {"domain/holidays.md": "# Holidays\n\nPayouts skip the seller's public holidays.\n"})
    settings = Settings(
        embed_model="none", knowledge=(KnowledgeRoot("team", str(team)), KnowledgeRoot("plain", str(folder)))
    )
    held = textwrap.dedent(CODE["shop/payouts.py"]).lstrip("\n")
    held += "\n\ndef hold(seller):\n    return seller\n"
    commit_later(root, {"shop/payouts.py": held}, "2026-03-01T00:00:00Z")
    committed = git(team, "log", "-1", "--format=%cs", "--", "domain/payout-rules.md").strip()
    with open_kb(root, settings) as kb:
        kb.build(no_llm=True)
        found = kb.retrieve("payout rules cancel_payout", "qa", budget=3000)
        rules = found.text
        holidays = kb.retrieve("do payouts skip public holidays", "qa", budget=3000).text
        fresh = kb.retrieve("how many days is the refund window", "qa", budget=3000).text

    def title(text: str, path: str) -> str:
        return next(line for line in text.splitlines() if line.startswith(f"## @knowledge/{path} "))

    behind = title(rules, "team/domain/payout-rules.md")
    assert behind.startswith(
        f"## @knowledge/team/domain/payout-rules.md (knowledge · last commit {committed}"
        " · behind the code: 1 commit since"
    )
    assert "the code no longer has" in behind
    assert re.fullmatch(
        r"## @knowledge/plain/domain/holidays\.md \(knowledge · modified \d{4}-\d\d-\d\d\)",
        title(holidays, "plain/domain/holidays.md"),
    )
    assert (
        title(fresh, "team/domain/payouts.md")
        == f"## @knowledge/team/domain/payouts.md (knowledge · last commit {committed})"
    )
    item = next(
        json.loads(found.to_json())["items"][i]
        for i, it in enumerate(found.items)
        if it.path == "@knowledge/team/domain/payout-rules.md"
    )
    assert item["date"] == f"last commit {committed}" and item["behind"].startswith("1 commit since")
    assert all("date" not in i for i in json.loads(found.to_json())["items"] if i["kind"] == "code")


def test_a_knowledge_slice_shows_the_heading_path_and_never_the_front_matter(
    shop: tuple[Path, Settings],
) -> None:
    root, settings = shop
    with open_kb(root, settings) as kb:
        kb.build(no_llm=True)
        found = kb.retrieve("is money ever a float? amounts in cents", "qa", budget=2000)
    assert any(i.path == "@knowledge/team/conventions/money.md" for i in found.items)
    assert "scope: [conventions, payments]" not in found.text
    block = found.text[found.text.index("## @knowledge/team/conventions/money.md") :]
    assert "### @knowledge/team/conventions/money.md:4-6 · in Money\n```markdown\n# Money\n" in block


def test_knowledge_in_a_slice_goes_domain_then_conventions_then_projects(shop: tuple[Path, Settings]) -> None:
    root, settings = shop
    task = "when does the shop payout batch run on mondays at 06:00 utc, in cents, after the refund window"
    with open_kb(root, settings) as kb:
        kb.build(no_llm=True)
        found = kb.retrieve(task, "qa", budget=4000, scopes=["domain", "conventions", "projects/shop"])
    shown = [(i.path, i.score) for i in found.items if i.kind == "knowledge"]
    assert [path for path, _ in shown] == [
        "@knowledge/team/domain/payouts.md",
        "@knowledge/team/conventions/money.md",
        "@knowledge/team/projects/shop/notes.md",
    ]
    assert max(shown, key=lambda pair: pair[1])[0] == "@knowledge/team/projects/shop/notes.md"  # ranked first
