"""Evaluation: the metrics, the golden-file parser and its errors, the whole-file baseline."""

from pathlib import Path

import pytest

from kbc.index.tokencount import default_counter
from kbc.retrieval.baseline import WholeFileBM25
from kbc.retrieval.golden import GoldenError, parse_golden, read_golden
from kbc.retrieval.metrics import (
    Gold,
    Passage,
    budget_recall,
    distinct_files,
    recall_at,
    reciprocal_rank,
    score,
    summarize,
)

FILES = ["a.py", "b.py", "c.py", "d.py", "e.py", "f.py", "g.py", "h.py", "i.py", "j.py", "k.py"]


def test_distinct_files_keep_the_first_position_of_each() -> None:
    assert distinct_files(["b.py", "a.py", "b.py", "c.py", "a.py"]) == ["b.py", "a.py", "c.py"]


def test_recall_at_k_is_the_fraction_of_gold_paths_in_the_first_k_files() -> None:
    gold = Gold(("b.py", "f.py", "z.py"))
    assert recall_at(FILES, gold, 5) == pytest.approx(1 / 3)
    assert recall_at(FILES, gold, 10) == pytest.approx(2 / 3)
    assert recall_at(FILES, Gold(("k.py",)), 10) == 0.0
    assert recall_at([], gold, 10) == 0.0


def test_reciprocal_rank_is_that_of_the_first_gold_file_and_zero_when_none_is_ranked() -> None:
    assert reciprocal_rank(FILES, Gold(("c.py", "b.py"))) == pytest.approx(1 / 2)
    assert reciprocal_rank(FILES, Gold(("k.py",))) == pytest.approx(1 / 11)  # the whole ranking counts
    assert reciprocal_rank(FILES, Gold(("z.py",))) == 0.0


def test_budget_recall_counts_a_path_with_ranges_only_when_a_packed_passage_overlaps_one() -> None:
    packed = [Passage("a.py", 1, 60), Passage("a.py", 100, 130), Passage("b.py", 49, 108)]
    assert budget_recall(packed, Gold(("a.py", "b.py", "c.py"))) == pytest.approx(2 / 3)
    narrowed = Gold(("a.py", "b.py"), {"a.py": ((70, 90),), "b.py": ((1, 10), (108, 120))})
    assert budget_recall(packed, narrowed) == pytest.approx(1 / 2)  # b.py touches line 108
    assert budget_recall(packed, Gold(("a.py",), {"a.py": ((61, 99), (131, 131))})) == 0.0
    assert budget_recall(packed, Gold(("a.py",), {"a.py": ((60, 60),)})) == 1.0


def test_scores_average_over_questions() -> None:
    first = score(["a.py", "b.py"], [Passage("a.py", 1, 5)], Gold(("a.py",)))
    second = score(["x.py"] * 1 + FILES, [], Gold(("b.py", "zz.py")))
    assert (first.recall_at_5, first.reciprocal_rank, first.budget_recall) == (1.0, 1.0, 1.0)
    assert (second.recall_at_5, second.reciprocal_rank, second.budget_recall) == (0.5, 1 / 3, 0.0)
    summary = summarize([first, second])
    assert summary.questions == 2
    assert summary.recall_at_5 == pytest.approx(0.75)
    assert summary.mrr == pytest.approx((1 + 1 / 3) / 2)
    assert summary.budget_recall == pytest.approx(0.5)
    assert summarize([]).questions == 0


# -- golden files ---------------------------------------------------------------

GOOD = """\
description: a shop
questions:
  - question: "how does packing stay within the token budget?"
    paths: [kbc/retrieval/pack.py, ./kbc/retrieval/pack.py]
    lines: {kbc/retrieval/pack.py: [60, 152]}
    symbols: [kbc.retrieval.pack.pack]

  - id: refunds
    question: where are refunds validated?
    paths: shop/refunds.py
    lines: {shop/refunds.py: [[1, 5], "20-30"]}
    use_case: qa
"""


def test_a_golden_file_gives_questions_with_defaults_and_the_line_each_starts_at() -> None:
    first, second = parse_golden(GOOD)
    assert first.paths == ("kbc/retrieval/pack.py",)
    assert first.lines == {"kbc/retrieval/pack.py": ((60, 152),)}
    assert first.symbols == ("kbc.retrieval.pack.pack",)
    assert (first.use_case, first.line, first.number) == ("implementation", 3, 1)
    assert second.lines == {"shop/refunds.py": ((1, 5), (20, 30))}
    assert (second.use_case, second.id, second.line) == ("qa", "refunds", 8)
    assert second.label == "question 2, line 8 (refunds)"


def test_a_bare_list_and_jsonl_are_golden_files_too(tmp_path: Path) -> None:
    (only,) = parse_golden("- question: q\n  paths: [a.py]\n")
    assert only.paths == ("a.py",)
    path = tmp_path / "golden.jsonl"
    path.write_text('{"question": "q1", "paths": ["a.py"]}\n\n{"question": "q2", "paths": ["b.py"], '
                    '"use_case": "review"}\n', encoding="utf-8")
    first, second = read_golden(path)
    assert (first.line, second.line, second.use_case) == (1, 3, "review")


def test_every_problem_of_a_golden_file_is_reported_at_once_naming_its_question() -> None:
    text = """\
questions:
  - question: "where is x?"
    path: [a.py]
  - question: ""
    paths: []
  - question: "where is y?"
    paths: [/etc/passwd, ../up.py, b.py]
    lines: {c.py: [1, 2], b.py: [9, 3]}
    symbols: [3]
  - just text
"""
    with pytest.raises(GoldenError) as caught:
        parse_golden(text, "g.yaml")
    problems = caught.value.problems
    assert problems == (
        "question 1, line 2 ('where is x?'): unknown key 'path' (known: question, paths, lines, symbols, "
        "use_case, id)",
        "question 1, line 2 ('where is x?'): `paths` is missing (the files that answer the question)",
        "question 2, line 4: `question` is missing or empty",
        "question 2, line 4: `paths` is empty; name at least one file",
        "question 3, line 6 ('where is y?'): path '/etc/passwd' must be relative to the repository, "
        "without '..'",
        "question 3, line 6 ('where is y?'): path '../up.py' must be relative to the repository, "
        "without '..'",
        "question 3, line 6 ('where is y?'): `lines` names 'c.py', which is not one of its `paths`",
        "question 3, line 6 ('where is y?'): `lines` of 'b.py' must be [start, end] (1 <= start <= end) "
        "or a list of such ranges, not [9, 3]",
        "question 3, line 6 ('where is y?'): `symbols` must be a list of non-empty strings",
        "question 4, line 10: must be a mapping with `question` and `paths`, not str",
    )
    message = str(caught.value)
    assert message.startswith("g.yaml: 10 problems in the golden file:")
    assert "docs/eval.md" in message


@pytest.mark.parametrize(("text", "problem"), [
    ("questions: [\n", "not valid YAML at line 2, column 1"),
    ("questions:\n", "the top level must be a list of questions"),
    ("questions: []\nquestons: []\n", "unknown keys 'questons'"),
    ("", "the top level must be a list of questions"),
    ("[]", "it holds no questions"),
    ('{"question": "q", "paths": ["a.py"]}\n{"question": \n', "line 2: not valid JSON"),
])
def test_unusable_golden_files_say_why(text: str, problem: str) -> None:
    with pytest.raises(GoldenError) as caught:
        parse_golden(text, "g")
    assert problem in str(caught.value)


# -- the baseline ---------------------------------------------------------------


def test_bm25_ranks_whole_files_and_fills_a_budget_with_whole_files(tmp_path: Path) -> None:
    (tmp_path / "refunds.py").write_text("def validate_refund(amount):\n    return amount > 0\n" * 40)
    (tmp_path / "orders.py").write_text("def place_order(cart):\n    return cart\n")
    (tmp_path / "README.md").write_text("A refund is checked before it is paid.\n")
    counter = default_counter()
    with WholeFileBM25(tmp_path, ["refunds.py", "orders.py", "README.md", "missing.py"]) as bm25:
        ranked = bm25.rank("where do we validate a refund?")
        assert ranked[0] == "refunds.py" and "orders.py" not in ranked
        assert set(ranked) == {"refunds.py", "README.md"}
        assert bm25.fill(ranked, 10_000, counter) == ranked
        assert bm25.fill(ranked, 40, counter) == ["README.md"]  # refunds.py alone is too big
        assert bm25.rank("the of and") == []
