"""Slices to trust on every kind of question, on small corpora built here (lexical, so fast):
a team note that answers the question in its own words leads the slice and the extractive
answer; an older copy of a class gives way to the class its package exports; a task about
something the repository does not hold packs nothing and says so; a task that names a
definition exactly is not marked low-confidence; a licence header the files share stays out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from corpora import LICENCE, NOTES, TOOLBELT
from helpers import LEXICAL, RepoFactory, write_tree

from kbc.cli.main import cli

REFUND = "how many days do members have to ask for a refund after delivery"
OFF_TOPIC = (
    "how do we schedule kubernetes pods for the billing workers with node affinity and taints, "
    "and what request limits do they get"
)
NAMED = "parse_duration returns None for '1h 30m' with a space between the parts"
COPY = (
    "OrderedMultiDict.poplast leaves the key behind: after d.add('a', 1); d.poplast('a') the key "
    "is still listed by d.items(multi=True)"
)


def invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, [*LEXICAL, *args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def toolbelt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from helpers import repo_factory

    make: RepoFactory = repo_factory(tmp_path_factory.mktemp("toolbelt"))
    root = make(TOOLBELT)
    notes = root.parent / "notes"
    write_tree(notes, dict(NOTES))
    invoke("build", str(root), "--no-llm", "--knowledge", f"team={notes}")
    return root


def slice_of(root: Path, task: str, *more: str) -> dict[str, object]:
    return json.loads(invoke("retrieve", "--repo", str(root), "--format", "json", *more, task))  # type: ignore[no-any-return]


def test_a_note_that_answers_the_question_leads_the_slice_and_the_answer(toolbelt: Path) -> None:
    found = slice_of(toolbelt, REFUND, "--budget", "4000")
    items = found["items"]
    assert isinstance(items, list) and items
    assert items[0]["path"] == "@knowledge/team/domain/refunds.md"
    assert not found["low_confidence"]
    answer = invoke("ask", "--repo", str(toolbelt), "--no-llm", REFUND)
    quoted = [line for line in answer.splitlines() if line.startswith("- [")]
    assert quoted[0].startswith("- [@knowledge/team/domain/refunds.md:")
    assert "90 days of delivery" in answer
    hits = json.loads(
        invoke("search", "--repo", str(toolbelt), "--scope", "domain", "--format", "json", "refund members")
    )
    assert hits[0]["path"] == "@knowledge/team/domain/refunds.md"
    gaps = json.loads(invoke("gaps", "--repo", str(toolbelt), "--format", "json"))
    assert REFUND not in json.dumps(gaps)  # answered, so no knowledge gap


def test_the_class_a_package_exports_comes_before_its_older_copy(toolbelt: Path) -> None:
    found = slice_of(toolbelt, COPY, "--budget", "4000")
    code = [i["path"] for i in found["items"] if i["kind"] == "code"]  # type: ignore[union-attr]
    assert code[0] == "toolbelt/dictutils.py"
    copied = sum(i["tokens"] for i in found["items"] if i["path"] == "toolbelt/urlutils.py")  # type: ignore[union-attr]
    assert copied < 0.25 * int(found["tokens"])  # type: ignore[call-overload]


def test_a_task_the_repository_does_not_answer_packs_nothing_and_says_so(toolbelt: Path) -> None:
    found = slice_of(toolbelt, OFF_TOPIC)
    assert found["low_confidence"] is True
    assert found["items"] == []
    text = str(found["text"])
    assert "Nothing relevant: little in this repository matches the task" in text
    assert "Nearest matches: toolbelt/" in text
    anyway = slice_of(toolbelt, OFF_TOPIC, "--min-confidence", "0")
    assert anyway["items"]  # the caller may still ask for the nearest matches


def test_a_task_naming_a_definition_exactly_is_confident(toolbelt: Path) -> None:
    found = slice_of(toolbelt, NAMED, "--budget", "3000")
    assert found["low_confidence"] is False
    assert found["items"][0]["path"] == "toolbelt/durations.py"  # type: ignore[index]


def test_the_licence_header_the_files_share_stays_out_of_the_slice(toolbelt: Path) -> None:
    found = slice_of(toolbelt, NAMED, "--budget", "3000")
    assert "Licensed under the Apache License" not in str(found["text"])
    opened = [i for i in found["items"] if i["path"].startswith("toolbelt/")]  # type: ignore[union-attr]
    header = len(LICENCE.rstrip("\n").splitlines())  # the licence's comment lines
    assert opened and all(i["start_line"] > header for i in opened)
