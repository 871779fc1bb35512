"""`kbc eval`: golden files and the repository's own history, scored for kbc and BM25."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import GIT_ENV, RepoFactory, git, write_tree

from kbc.analyzers.history_mining import mine_commits
from kbc.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]

# Measured on kbc's own repository with `KBC_EMBED_MODEL=none` (lexical retrieval), all 42
# questions of benchmarks/golden/kbc.yaml: Recall@5 0.929, Recall@10 0.976, MRR 0.691, budget
# recall 0.952 (BM25 whole files: 0.857, 0.952, 0.529, 0.857). The floors sit a little under.
FLOOR_RECALL_AT_10 = 0.92
FLOOR_MRR = 0.62
FLOOR_BUDGET_RECALL = 0.9

SHOP = {
    "shop/__init__.py": '"""Shop."""\n__version__ = "1.0"\n',
    "shop/orders.py": '''
        """Orders."""
        from shop.payments import charge


        def place(cart):
            """Place an order for a cart of items."""
            return charge(total(cart))


        def total(cart):
            """The sum of the prices in a cart."""
            return sum(item["price"] for item in cart)
    ''',
    "shop/payments.py": '''
        """Payments."""


        def charge(amount):
            """Charge an amount through the payment provider."""
            return {"charged": amount}
    ''',
    "shop/legacy.py": '''
        """Old refund handling."""


        def refund(payment):
            """Give a payment's money back."""
            return {"refunded": payment["charged"]}
    ''',
    "tests/test_orders.py": "from shop.orders import total\n\n\ndef test_total():\n"
                            "    assert total([]) == 0\n",
    "README.md": "# Shop\n\nA small shop.\n",
    "pyproject.toml": '[project]\nname = "shop"\nversion = "1.0"\n',
}


def invoke(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    return result.output


class History:
    """Commits with one day between them, so the log order and the parents' order are known."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.day = 1

    def git(self, *args: str) -> str:
        self.day += 1
        stamp = f"2026-01-{self.day:02d}T00:00:00Z"
        env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
        return subprocess.run(["git", "-C", str(self.root), *args], check=True, env=env,
                              capture_output=True, text=True).stdout

    def commit(self, message: str, files: dict[str, str | bytes] | None = None) -> str:
        write_tree(self.root, files or {})
        git(self.root, "add", "-A")
        self.git("commit", "-q", "-m", message)
        return git(self.root, "rev-parse", "HEAD").strip()


@pytest.fixture
def shop_history(make_repo: RepoFactory) -> tuple[Path, dict[str, str]]:
    root = make_repo(SHOP)
    history = History(root)
    limit = SHOP["shop/orders.py"] + '''

        LIMIT = 1000


        def check_limit(cart):
            """Reject an order over the limit."""
            if total(cart) > LIMIT:
                raise ValueError("over the limit")
    '''
    shas = {"limit": history.commit(
        "Reject orders over the limit\n\nThe limit protects the payment provider.\n\n"
        "Signed-off-by: A Developer <dev@example.invalid>\n",
        {"shop/orders.py": limit, "tests/test_orders.py": SHOP["tests/test_orders.py"] + "# limit\n"})}
    history.commit("Bump version to 1.1", {"shop/__init__.py": '"""Shop."""\n__version__ = "1.1"\n'})
    history.commit("Format with black", {"shop/payments.py": SHOP["shop/payments.py"] + "\n"})
    history.commit("Explain refunds in the README", {"README.md": "# Shop\n\nRefunds are manual.\n"})
    history.commit("Add a CSV exporter", {"shop/export.py": "def export(rows):\n    return rows\n"})
    history.commit("Rename the money helpers everywhere", {
        path: SHOP[path] + "# renamed\n" if path in SHOP else ""
        for path in ("shop/__init__.py", "shop/payments.py", "shop/legacy.py", "shop/export.py")})
    git(root, "checkout", "-q", "-b", "cents")
    cents = SHOP["shop/payments.py"] + '''

        def in_cents(amount):
            """An amount of money in cents."""
            return round(amount * 100)
    '''
    shas["cents"] = history.commit("Charge amounts in cents", {"shop/payments.py": cents})
    git(root, "checkout", "-q", "main")
    history.git("merge", "--no-ff", "-q", "-m", "Merge branch 'cents'", "cents")
    (root / "shop" / "legacy.py").rename(root / "shop" / "refunds.py")
    shas["refunds"] = history.commit("Move refunds out of the legacy module and into payments",
                                     {"shop/payments.py": cents + "# refunds moved\n"})
    history.commit("Fix typo in the error message", {"shop/orders.py": limit.replace("over", "above")})
    return root, shas


def test_the_history_miner_keeps_commits_that_changed_existing_source_files(
        shop_history: tuple[Path, dict[str, str]]) -> None:
    root, shas = shop_history
    mined = mine_commits(root, 10, max_files=3)
    assert [(c.sha, c.answer) for c in mined.commits] == [
        (shas["refunds"], ("shop/legacy.py", "shop/payments.py")),  # a rename answers with the old path
        (shas["cents"], ("shop/payments.py",)),
        (shas["limit"], ("shop/orders.py",)),  # tests are never the answer
    ]
    assert mined.reasons == {"formatting": 2, "huge": 1, "merge": 1, "new-files-only": 1, "non-source": 1,
                             "release": 1, "root": 1}
    assert mined.scanned == 11
    limit = mined.commits[-1]
    assert limit.query == "Reject orders over the limit\n\nThe limit protects the payment provider."
    times = [c.parent_time for c in mined.commits]
    assert times == sorted(times, reverse=True) and times[-1] > 0
    newest = mine_commits(root, 1, max_files=3)
    assert [c.sha for c in newest.commits] == [shas["refunds"]] and newest.scanned == 2
    assert {s.subject: s.reason for s in newest.skipped} == {"Fix typo in the error message": "formatting"}
    # Past the file limit, the huge commit qualifies (its existing source files are the answer).
    roomy = mine_commits(root, 10, max_files=20)
    assert "huge" not in roomy.reasons and len(roomy.commits) == 4


def test_eval_history_builds_each_parent_in_a_clone_and_scores_both_systems(
        shop_history: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KBC_EMBED_MODEL", "none")
    root, shas = shop_history
    head = git(root, "rev-parse", "HEAD")
    data = json.loads(invoke("eval", "--history", "2", "--repo", str(root), "--max-files", "3",
                             "--format", "json"))
    assert data["mode"] == "history" and data["retrieval"] == "lexical"
    assert data["questions"] == 2
    assert data["history"]["refresh"] == {"full": 1, "incremental": 1}  # the second reused the first
    assert data["history"]["skipped"] == {"formatting": 1, "merge": 1}
    # Chronological order of the parents: the cents branch first, then the refunds move.
    assert [r["label"].split()[0] for r in data["results"]] == [shas["cents"][:10], shas["refunds"][:10]]
    assert data["results"][1]["gold"] == ["shop/legacy.py", "shop/payments.py"]
    for system in ("kbc", "bm25"):
        overall = data["systems"][system]["overall"]
        assert overall["questions"] == 2
        assert set(overall) == {"questions", "recall@5", "recall@10", "mrr", "budget_recall"}
        assert 0.0 <= overall["mrr"] <= 1.0
    assert "shop/payments.py" in data["results"][0]["kbc"]["top"]
    # The user's work tree is untouched: same HEAD, nothing new, no store written into it.
    assert git(root, "rev-parse", "HEAD") == head
    assert git(root, "status", "--porcelain", "--ignored") == ""


def test_eval_golden_reports_per_use_case_and_overall(make_repo: RepoFactory, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KBC_EMBED_MODEL", "none")
    root = make_repo(SHOP)
    invoke("build", str(root), "--no-llm", "--workers", "1")
    golden = tmp_path / "golden.yaml"
    golden.write_text("""\
questions:
  - question: "how is the total of a cart computed?"
    paths: [shop/orders.py]
    symbols: [shop.orders.total]
  - question: "how are refunds given back?"
    paths: [shop/legacy.py]
    lines: {shop/legacy.py: [4, 6]}
    use_case: qa
""", encoding="utf-8")
    text = invoke("eval", "--golden", str(golden), "--repo", str(root))
    assert "kbc eval: 2 questions from" in text
    assert "Recall@5  Recall@10    MRR  Budget recall" in text
    for row in ("implementation  kbc", "qa              BM25 whole files", "overall         kbc"):
        assert row in text
    data = json.loads(invoke("eval", "--golden", str(golden), "--repo", str(root), "--use-case", "qa",
                             "--format", "json"))
    assert data["questions"] == 1 and list(data["systems"]["kbc"]) == ["qa", "overall"]
    assert data["systems"]["kbc"]["qa"]["recall@5"] == 1.0
    assert data["results"][0]["gold"] == ["shop/legacy.py"]
    error = invoke("eval", "--golden", str(golden), "--repo", str(root), "--use-case", "nope", code=1)
    assert "no use case named 'nope'" in error and "implementation" in error


def test_a_bad_golden_file_is_a_clear_error_naming_the_question(make_repo: RepoFactory, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KBC_EMBED_MODEL", "none")
    root = make_repo(SHOP)
    golden = tmp_path / "golden.yaml"
    golden.write_text("questions:\n  - question: where?\n    path: [shop/orders.py]\n", encoding="utf-8")
    error = invoke("eval", "--golden", str(golden), "--repo", str(root), code=2)
    assert "question 1, line 2 ('where?'): unknown key 'path'" in error
    invoke("build", str(root), "--no-llm", "--workers", "1")
    golden.write_text("questions:\n  - question: where?\n    paths: [shop/nope.py, shop/orders.py]\n"
                      "    symbols: [shop.orders.missing, shop.payments.charge]\n"
                      "    use_case: qa\n", encoding="utf-8")
    error = invoke("eval", "--golden", str(golden), "--repo", str(root), code=2)
    assert "question 1, line 2 ('where?'): shop/nope.py is not a tracked text file" in error
    assert "no symbol 'shop.orders.missing'" in error
    assert "'shop.payments.charge' is defined in shop/payments.py, which is not one of its `paths`" in error
    assert "either --golden FILE or --history N" in invoke("eval", "--repo", str(root), code=1)


def test_kbc_golden_file_on_kbc_itself_stays_above_the_floors(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KBC_EMBED_MODEL", "none")  # lexical retrieval keeps this quick
    clone = tmp_path / "kbc"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    invoke("build", str(clone), "--no-llm", "--workers", "2")
    data = json.loads(invoke("eval", "--golden", str(clone / "benchmarks" / "golden" / "kbc.yaml"),
                             "--repo", str(clone), "--format", "json"))
    overall = data["systems"]["kbc"]["overall"]
    assert data["retrieval"] == "lexical" and overall["questions"] >= 30
    assert overall["recall@10"] >= FLOOR_RECALL_AT_10, overall
    assert overall["mrr"] >= FLOOR_MRR, overall
    assert overall["budget_recall"] >= FLOOR_BUDGET_RECALL, overall
