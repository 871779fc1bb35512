"""Evaluation: the metrics, the golden-file parser and its errors, the whole-file baseline."""

import math
import sys
from pathlib import Path

import pytest

from kbc.eval.baseline import WholeFileBM25
from kbc.eval.golden import GoldenError, parse_golden, read_golden
from kbc.eval.metrics import (
    BUDGETS,
    Gold,
    Passage,
    Scores,
    budget_recall,
    distinct_files,
    hunk_all,
    recall_at,
    reciprocal_rank,
    score,
    summarize,
    tokens_to_gold,
)
from kbc.index.tokencount import default_counter

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
    first = score(["a.py", "b.py"], [Passage("a.py", 1, 5)], Gold(("a.py",)), lambda budget: [])
    second = score(["x.py"] * 1 + FILES, [], Gold(("b.py", "zz.py")), lambda budget: [])
    assert (first.recall_at_5, first.reciprocal_rank, first.budget_recall) == (1.0, 1.0, 1.0)
    assert (second.recall_at_5, second.reciprocal_rank, second.budget_recall) == (0.5, 1 / 3, 0.0)
    summary = summarize([first, second])
    assert summary.questions == 2
    assert summary.recall_at_5 == pytest.approx(0.75)
    assert summary.mrr == pytest.approx((1 + 1 / 3) / 2)
    assert summary.budget_recall == pytest.approx(0.5)
    assert summarize([]).questions == 0
    # Neither question has line ranges: the line metrics are not computed.
    assert (first.hunk_all, first.tokens_to_gold) == (None, None)
    assert (summary.hunk_questions, summary.hunk_all) == (0, None)
    assert summary.as_data()["hunk_all@budget"] is None and summary.as_data()["tokens_to_gold_median"] is None


def test_hunk_all_needs_every_line_of_every_range_in_the_union_of_the_packed_passages() -> None:
    gold = Gold(("a.py",), {"a.py": ((8, 15),)})
    adjacent = [Passage("a.py", 11, 20), Passage("a.py", 1, 10)]
    assert hunk_all(adjacent, gold) == 1.0
    assert hunk_all([Passage("a.py", 1, 10), Passage("a.py", 12, 20)], gold) == 0.0  # line 11 missing
    assert hunk_all([Passage("a.py", 9, 20)], gold) == 0.0
    assert hunk_all([Passage("b.py", 1, 20)], gold) == 0.0  # the lines of another file
    assert hunk_all([Passage("a.py", 1, sys.maxsize)], Gold(("a.py",), {"a.py": ((100, 200),)})) == 1.0


def test_hunk_all_needs_the_ranges_of_every_gold_file_and_is_undefined_without_any() -> None:
    two = Gold(("a.py", "b.py"), {"a.py": ((3, 4), (30, 30)), "b.py": ((1, 1),)})
    assert hunk_all([Passage("a.py", 1, 5), Passage("a.py", 30, 31), Passage("b.py", 1, 2)], two) == 1.0
    assert hunk_all([Passage("a.py", 1, 5), Passage("b.py", 1, 2)], two) == 0.0  # a.py's second range
    assert hunk_all([Passage("a.py", 1, 40)], two) == 0.0  # b.py is not packed
    # A gold file without ranges asks nothing of HunkAll (budget recall counts it).
    partly = Gold(("a.py", "b.py"), {"a.py": ((3, 4),)})
    assert hunk_all([Passage("a.py", 1, 5)], partly) == 1.0
    assert hunk_all([Passage("b.py", 1, 5)], partly) == 0.0
    assert hunk_all([Passage("a.py", 1, 5)], Gold(("a.py",))) is None
    assert hunk_all([], Gold(("a.py",), {"a.py": ()})) is None


def grows(budget: int) -> list[Passage]:
    """A packing that holds ten more lines of a.py per thousand tokens."""
    return [Passage("a.py", 1, budget // 100)]


def test_tokens_to_gold_is_the_smallest_budget_at_which_hunk_all_holds() -> None:
    assert BUDGETS[0] == 1_000 and BUDGETS[-1] == 27_000 and len(BUDGETS) == 27
    assert tokens_to_gold(grows, Gold(("a.py",), {"a.py": ((41, 50),)})) == 5_000
    assert tokens_to_gold(grows, Gold(("a.py",), {"a.py": ((1, 1),)})) == 1_000
    assert tokens_to_gold(grows, Gold(("a.py",), {"a.py": ((270, 271),)})) is None  # 270 lines at 27k
    assert tokens_to_gold(grows, Gold(("a.py",))) is None
    asked: list[int] = []

    def recorded(budget: int) -> list[Passage]:
        asked.append(budget)
        return grows(budget)

    assert tokens_to_gold(recorded, Gold(("a.py",), {"a.py": ((25, 25),)})) == 3_000
    assert asked == [1_000, 2_000, 3_000]  # no packing past the first that holds


def test_line_metrics_are_summarized_over_the_questions_with_ranges() -> None:
    def asked(end: int) -> Scores:
        return score(["a.py"], grows(12_000), Gold(("a.py",), {"a.py": ((end, end),)}), grows)

    early, late, never = asked(20), asked(150), asked(300)
    unranged = score(["a.py"], grows(12_000), Gold(("a.py",)), grows)
    assert (early.hunk_all, early.tokens_to_gold) == (1.0, 2_000)
    assert (late.hunk_all, late.tokens_to_gold) == (0.0, 15_000)  # over the use case's budget
    assert (never.hunk_all, never.tokens_to_gold) == (0.0, None)
    assert never.as_data()["tokens_to_gold"] == "never" and unranged.as_data()["tokens_to_gold"] is None
    assert early.as_data()["hunk_all@budget"] == 1.0 and unranged.as_data()["hunk_all@budget"] is None
    summary = summarize([early, late, never, unranged])
    assert (summary.questions, summary.hunk_questions, summary.tokens_to_gold_never) == (4, 3, 1)
    assert summary.hunk_all == pytest.approx(1 / 3)
    assert summary.tokens_to_gold_median == 15_000  # never counts as more than any budget
    assert summary.budget_recall == 0.5  # unchanged: a passage overlapping a range (or any, without)
    data = summary.as_data()
    assert (data["hunk_questions"], data["hunk_all@budget"]) == (3, 0.3333)
    assert (data["tokens_to_gold_median"], data["tokens_to_gold_never"]) == (15_000, 1)
    assert summarize([early, late]).tokens_to_gold_median == 8_500
    mostly_never = summarize([early, never, never])
    assert mostly_never.tokens_to_gold_median == math.inf
    assert mostly_never.as_data()["tokens_to_gold_median"] == "never"


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
    path.write_text(
        '{"question": "q1", "paths": ["a.py"]}\n\n{"question": "q2", "paths": ["b.py"], '
        '"use_case": "review"}\n',
        encoding="utf-8",
    )
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


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("questions: [\n", "not valid YAML at line 2, column 1"),
        ("questions:\n", "the top level must be a list of questions"),
        ("questions: []\nquestons: []\n", "unknown keys 'questons'"),
        ("", "the top level must be a list of questions"),
        ("[]", "it holds no questions"),
        ('{"question": "q", "paths": ["a.py"]}\n{"question": \n', "line 2: not valid JSON"),
    ],
)
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
