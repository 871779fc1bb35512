"""`kbc refresh`: proportionate, exact against a cold build, safe to kill, one writer at a time."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import LEXICAL, git, write_tree
from helpers import store_snapshot as snapshot

from kbc.cli.main import cli
from kbc.domain.settings import Settings
from kbc.index.lexical import LexicalIndex
from kbc.retrieval.features import FILE_FEATURES, file_features
from kbc.retrieval.precedent import MIN_PRECEDENTS
from kbc.services.build import build_repository
from kbc.services.refresh import refresh
from kbc.services.retrieve import open_retriever, profile_named
from kbc.services.status import repository_status
from kbc.store.facts_store import FactsStore
from kbc.store.lock import writer_lock
from kbc.store.views_store import ViewsStore

BASE = {
    "shop/__init__.py": '"""Shop."""\n',
    "shop/orders.py": '''
        """Orders."""
        from shop.payments import charge

        LIMIT = 100


        def place(amount):
            """Place an order."""
            if amount > LIMIT:
                raise ValueError("over the limit")
            return charge(amount)
    ''',
    "shop/payments.py": '''
        """Payments."""


        def charge(amount):
            """Charge an amount."""
            return {"charged": amount}
    ''',
    "shop/cli.py": '''
        """Command line."""
        from shop.orders import place


        def main():
            place(1)


        if __name__ == "__main__":
            main()
    ''',
    "docs/shop.md": "# Shop\n\nHow orders work.\n",
}


def settings(**fields: Any) -> Settings:
    """Small fixtures change a large fraction of their files; only the file count may force a
    rebuild. Vectors are tested elsewhere: here the store's exactness is about facts, chunks and
    views, so the index is lexical."""
    return Settings(**{"workers": 1, "full_rebuild_fraction": 1.0, "embed_model": "none", **fields})


def commit(
    root: Path,
    files: dict[str, str],
    message: str,
    remove: tuple[str, ...] = (),
    rename: tuple[tuple[str, str], ...] = (),
) -> str:
    for old, new in rename:
        git(root, "mv", old, new)
    for path in remove:
        git(root, "rm", "-q", path)
    write_tree(root, files)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def cold(source: Path, commit_id: str, tmp_path: Path) -> dict[str, Any]:
    """A cold build of ``commit_id`` in a fresh clone whose folder has the same name."""
    clone = tmp_path / f"cold-{commit_id[:8]}" / source.name
    clone.parent.mkdir()
    subprocess.run(["git", "clone", "-q", str(source), str(clone)], check=True)
    git(clone, "checkout", "-q", commit_id)
    build_repository(clone, settings(), no_llm=True)
    return snapshot(clone / ".kbc")


@pytest.mark.slow
def test_refresh_follows_a_history_and_equals_a_cold_build(make_repo: Any, tmp_path: Path) -> None:
    root = make_repo(BASE)
    first = refresh(str(root), settings(), no_llm=True)
    assert (first.mode, first.reason) == ("full", "no completed build in the store yet")

    second_commit = commit(
        root,
        {
            "shop/orders.py": BASE["shop/orders.py"]
            + '''

def cancel(order_id):
    """Cancel an order."""
    return order_id
''',
            "shop/refunds.py": '"""Refunds."""\n\n\ndef refund(amount):\n    return -amount\n',
        },
        "orders can be cancelled; refunds",
        rename=(("shop/payments.py", "shop/billing.py"),),
    )
    write_tree(
        root,
        {"shop/orders.py": (root / "shop/orders.py").read_text().replace("shop.payments", "shop.billing")},
    )
    second_commit = commit(root, {}, "import billing")
    second = refresh(str(root), settings(), no_llm=True)
    assert second.mode == "incremental" and second.after == second_commit
    assert second.changes.renamed == (("shop/payments.py", "shop/billing.py"),)
    assert second.changes.added == ("shop/refunds.py",) and second.changes.modified == ("shop/orders.py",)
    assert second.build is not None
    assert (second.build.analyze.parsed, second.build.index.changed_files) == (3, 3)
    assert snapshot(root / ".kbc") == cold(root, second_commit, tmp_path)

    third_commit = commit(
        root, {"docs/shop.md": "# Shop\n\nOrders and refunds.\n"}, "docs", remove=("shop/cli.py",)
    )
    third = refresh(str(root), settings(), no_llm=True)
    assert third.mode == "incremental" and third.build is not None
    assert (third.build.analyze.parsed, third.build.index.changed_files, third.build.index.removed_files) == (
        0,
        1,
        1,
    )
    refreshed = snapshot(root / ".kbc")
    assert not any(v.startswith("workflow:") for v in refreshed["views"])  # the entry point is gone
    assert refreshed == cold(root, third_commit, tmp_path)

    again = refresh(str(root), settings(), no_llm=True)
    assert (again.mode, again.build) == ("up-to-date", None)


@pytest.mark.slow
def test_a_refresh_reads_the_new_commits_as_precedents_for_the_next_task(make_repo: Any) -> None:
    root = make_repo(BASE)
    refresh(str(root), settings(), no_llm=True)
    retriever = open_retriever(root, settings())
    try:  # one commit is too short a history: the credit is unknown, not none
        assert retriever.signals("refunds", profile_named(root, "implementation")).precedent is None
    finally:
        retriever.close()
    for number in range(MIN_PRECEDENTS):
        commit(root, {"docs/shop.md": f"# Shop\n\nRevision {number}.\n"}, f"docs revision {number}")
    commit(
        root,
        {"shop/payments.py": BASE["shop/payments.py"] + "\n\nCURRENCY = 'EUR'\n"},
        "Charge in euros: the settlement currency of the acquirer",
    )
    commit(root, {"docs/shop.md": "# Shop\n\nOrders, in euros.\n"}, "document the currency")
    refreshed = refresh(str(root), settings(), no_llm=True)
    # only the docs changed since the commit of interest; its message is read all the same
    assert refreshed.mode == "incremental"
    retriever = open_retriever(root, settings())
    try:
        words, paths = retriever.lexical.precedents()[1]
        assert (words[:3], paths) == (["charge", "euros", "settlement"], ["shop/payments.py"])
        profile = profile_named(root, "implementation")
        signals = retriever.signals("the acquirer rejects our settlement currency", profile)
        assert signals.precedent is not None
        assert max(signals.precedent, key=lambda p: signals.precedent[p]) == "shop/payments.py"
        row = dict(
            zip(
                FILE_FEATURES,
                file_features(signals, ["shop/payments.py", "shop/orders.py"], retriever.repository())[0],
                strict=True,
            )
        )
        assert row["precedent"] == 1.0
    finally:
        retriever.close()


@pytest.mark.slow
def test_past_the_drift_threshold_the_store_is_rebuilt_from_scratch(make_repo: Any) -> None:
    root = make_repo(BASE)
    refresh(str(root), settings(), no_llm=True)
    commit(
        root,
        {
            "shop/payments.py": BASE["shop/payments.py"] + "\n\nRATE = 2\n",
            "shop/orders.py": BASE["shop/orders.py"] + "\n\nMAX = 3\n",
        },
        "two files",
    )
    by_fraction = refresh(str(root), settings(full_rebuild_fraction=0.3), no_llm=True)
    assert by_fraction.mode == "full"
    assert by_fraction.reason == "2 of 5 files changed (40%), at or past KB_FULL_REBUILD_FRACTION=0.3"
    # every file chunked again; the unchanged ones' facts from the analysis cache
    assert by_fraction.build is not None and (
        by_fraction.build.analyze.parsed,
        by_fraction.build.analyze.cached,
    ) == (2, 2)
    forced = refresh(str(root), settings(), no_llm=True, force_full=True)
    assert forced.build is not None and (forced.mode, forced.build.analyze.parsed) == ("full", 4)  # all
    commit(root, {"docs/shop.md": "# Shop\n"}, "one doc")
    by_count = refresh(str(root), settings(full_rebuild_files=1), no_llm=True)
    assert by_count.mode == "full"
    assert by_count.reason == "1 files changed, at or past KB_FULL_REBUILD_FILES=1"


def _many_modules(count: int) -> dict[str, str]:
    files = dict(BASE)
    for number in range(count):
        body = "\n\n".join(
            f'def step_{number}_{k}(value):\n    """Step {k} of part {number}."""\n'
            f"    if value > {k + 2}:\n        raise ValueError('too big')\n    return value + {k}\n"
            for k in range(8)
        )
        files[f"shop/parts/part_{number}.py"] = f'"""Part {number}."""\n\n\n{body}\n'
    files["shop/parts/__init__.py"] = ""
    return files


def _usable(store_root: Path) -> None:
    """The store reads back whole: facts, the lexical index, the views."""
    assert sum(1 for _ in FactsStore(store_root).facts()) > 0
    lexical = LexicalIndex(store_root / "index" / "lexical.sqlite")
    try:
        assert not lexical.stale and lexical.chunk_ids()
    finally:
        lexical.close()
    ViewsStore(store_root).read()


@pytest.mark.slow
def test_a_refresh_killed_at_any_moment_leaves_a_usable_store_and_completes_later(
    make_repo: Any, tmp_path: Path
) -> None:
    root = make_repo(_many_modules(60))
    build_repository(root, settings(), no_llm=True)
    kbc = [sys.executable, "-m", "kbc", *LEXICAL, "-c", "analyze.workers=2"]
    rng = random.Random(20261129)
    for round_number in range(8):
        if round_number % 2 == 0:
            commit(
                root,
                {
                    f"shop/parts/part_{round_number}.py": f'"""Part {round_number}, changed."""\n',
                    f"shop/extra_{round_number}.py": "X = 1\n",
                },
                f"change {round_number}",
            )
        process = subprocess.Popen(
            [*kbc, "refresh", str(root), "--no-llm", "--full"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.5, 4.0))
        process.send_signal(signal.SIGKILL)
        process.wait()
        _usable(root / ".kbc")
    final = subprocess.run(
        [*kbc, "refresh", str(root), "--no-llm", "--ci"], capture_output=True, text=True, timeout=300
    )
    assert final.returncode == 0, final.stderr
    assert json.loads(final.stdout)["ok"] is True
    head = git(root, "rev-parse", "HEAD").strip()
    assert snapshot(root / ".kbc") == cold(root, head, tmp_path)


@pytest.mark.slow
def test_a_build_killed_midway_changes_nothing_readers_see_and_refresh_clears_what_it_left(
    make_repo: Any, tmp_path: Path
) -> None:
    root = make_repo(_many_modules(60))
    store_root = root / ".kbc"
    build_repository(root, settings(), no_llm=True)
    before = snapshot(store_root)
    live = (store_root / "CURRENT").read_text()
    staged = store_root / "index" / "lexical.next.sqlite"
    kbc = [sys.executable, "-m", "kbc", *LEXICAL, "-c", "analyze.workers=1"]
    ask = [*kbc, "retrieve", "--repo", str(root), "--format", "json", "which step raises too big?"]
    answer = subprocess.run(ask, capture_output=True, text=True, check=True).stdout
    parts = sorted((root / "shop" / "parts").glob("part_*.py"))
    for path in parts:  # edits that move every line, never committed
        path.write_text("# a line that moves the rest\n" + path.read_text())
    process = subprocess.Popen(
        [*kbc, "build", str(root), "--no-llm"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline:
        # Killed once the build has new facts (the store's pointer moved) or writes its index.
        if (store_root / "CURRENT").read_text() != live or staged.exists():
            process.send_signal(signal.SIGKILL)
            break
        time.sleep(0.002)
    assert process.wait() == -signal.SIGKILL, "the build finished before it could be killed"
    # Readers still see the last completed build, whole, and the status says a build was cut short.
    assert snapshot(store_root) == before
    assert "stopped before it finished" in repository_status(root, settings()).note
    assert subprocess.run(ask, capture_output=True, text=True, check=True).stdout == answer
    git(root, "checkout", "-q", "--", ".")
    repaired = refresh(str(root), settings(), no_llm=True)
    assert (repaired.mode, repaired.reason) == (
        "incremental",
        "no file changed, but the last build was stopped before it finished; its work is done again",
    )
    assert not staged.exists() and not (store_root / "building.json").exists()
    assert snapshot(store_root) == before == cold(root, git(root, "rev-parse", "HEAD").strip(), tmp_path)
    assert subprocess.run(ask, capture_output=True, text=True, check=True).stdout == answer
    assert refresh(str(root), settings(), no_llm=True).mode == "up-to-date"


@pytest.mark.slow
def test_a_build_of_uncommitted_changes_is_not_taken_for_its_commit(make_repo: Any, tmp_path: Path) -> None:
    root = make_repo(BASE)
    build_repository(root, settings(), no_llm=True)
    before = snapshot(root / ".kbc")
    (root / "shop" / "payments.py").write_text('"""Payments."""\n\n\ndef refund(amount):\n    return 0\n')
    (root / "shop" / "draft.py").write_text("DRAFT = 1\n")
    git(root, "add", "shop/draft.py")  # tracked, never committed
    build_repository(root, settings(), no_llm=True)
    assert snapshot(root / ".kbc") != before
    git(root, "rm", "-qf", "shop/draft.py")
    git(root, "checkout", "-q", "--", ".")
    back = refresh(str(root), settings(), no_llm=True)
    assert (back.mode, back.reason) == (
        "incremental",
        "no file changed, but the last build read uncommitted changes",
    )
    assert snapshot(root / ".kbc") == before == cold(root, git(root, "rev-parse", "HEAD").strip(), tmp_path)
    (root / "shop" / "scratch.py").write_text("SCRATCH = 1\n")  # untracked: not read, no change
    assert refresh(str(root), settings(), no_llm=True).mode == "up-to-date"
    (root / "shop" / "draft.py").write_text("DRAFT = 1\n")
    git(root, "add", "shop/draft.py")
    staged = refresh(str(root), settings(), no_llm=True)
    assert (staged.mode, staged.reason) == ("incremental", "1 of 5 files changed (20.0%)")
    assert refresh(str(root), settings(), no_llm=True).mode == "up-to-date"  # the same changes, built
    (root / "shop" / "draft.py").write_text("DRAFT = 2\n")
    assert refresh(str(root), settings(), no_llm=True).mode == "incremental"  # changed again
    git(root, "rm", "-qf", "shop/draft.py")
    assert refresh(str(root), settings(), no_llm=True).mode == "incremental"  # the draft is read out again
    assert refresh(str(root), settings(), no_llm=True).mode == "up-to-date"


@pytest.mark.slow
def test_a_build_finishing_during_a_request_does_not_close_what_the_request_reads(make_repo: Any) -> None:
    from kbc.services.components import Components
    from kbc.services.knowledge import KnowledgeBase

    root = make_repo(BASE)
    build_repository(root, settings(), no_llm=True)
    with KnowledgeBase(root, settings=settings(), components=Components.lexical()) as kb:
        profile = kb.use_cases.named("implementation")
        in_use = kb.served.retriever()  # a request has its retriever ...
        commit(
            root,
            {"shop/refunds.py": '"""Refunds."""\n\n\ndef refund(amount):\n    return -amount\n'},
            "refunds",
        )
        refresh(str(root), settings(), no_llm=True)  # ... when a build completes
        kb.reads.manifest()  # and the request's next read follows the store to the new build
        found = in_use.search("where is an order placed over the limit?", profile)
        assert found.ranked and "shop/refunds.py" not in {c.path for c in found.chunks.values()}
        assert "shop/refunds.py" in {
            c.path for c in kb.served.retriever().search("refund", profile).chunks.values()
        }


@pytest.mark.slow
def test_a_second_writer_waits_or_gives_up_and_says_so(make_repo: Any) -> None:
    root = make_repo(BASE)
    store_root = root / ".kbc"
    runner = CliRunner()
    with writer_lock(store_root, timeout=1):
        result = runner.invoke(cli, [*LEXICAL, "refresh", str(root), "--no-llm", "--lock-timeout", "1"])
    assert result.exit_code == 4
    assert f"gave up after 1 s waiting for another kbc writer (pid {os.getpid()})" in result.output

    released = threading.Event()

    def hold() -> None:
        with writer_lock(store_root, timeout=1):
            released.wait(1.5)

    holder = threading.Thread(target=hold)
    holder.start()
    time.sleep(0.3)
    threading.Timer(1.0, released.set).start()
    result = runner.invoke(cli, [*LEXICAL, "refresh", str(root), "--no-llm", "--lock-timeout", "60"])
    holder.join()
    assert result.exit_code == 0, result.output
    assert "waiting for another kbc writer" in result.output
    assert "lock          waited" in result.output


@pytest.mark.slow
def test_a_build_waiting_for_another_writer_says_so(make_repo: Any) -> None:
    root = make_repo(BASE)
    released = threading.Event()

    def hold() -> None:
        with writer_lock(root / ".kbc", timeout=1):
            released.wait(1.5)

    holder = threading.Thread(target=hold)
    holder.start()
    time.sleep(0.3)
    threading.Timer(1.0, released.set).start()
    result = CliRunner().invoke(cli, [*LEXICAL, "build", str(root), "--no-llm"])
    holder.join()
    assert result.exit_code == 0, result.output
    assert f"waiting for another kbc writer (pid {os.getpid()})" in result.output


@pytest.mark.slow
def test_a_url_is_cloned_then_followed(make_repo: Any, tmp_path: Path) -> None:
    origin = make_repo(BASE)
    data = str(tmp_path / "data")
    url = origin.as_uri()
    first = refresh(url, settings(data_dir=data), no_llm=True)
    assert first.mode == "full" and Path(first.root).is_relative_to(tmp_path / "data" / "repos")
    assert first.branch == "main"
    moved = commit(origin, {"shop/payments.py": BASE["shop/payments.py"] + "\n\nRATE = 2\n"}, "rate")
    second = refresh(url, settings(data_dir=data), no_llm=True)
    assert (second.mode, second.after, second.changes.modified) == (
        "incremental",
        moved,
        ("shop/payments.py",),
    )
    result = CliRunner().invoke(cli, [*LEXICAL, "refresh", "file:///nonexistent/repo.git", "--ci"])
    assert result.exit_code == 5
    error = json.loads(result.output)["error"]
    assert error.startswith("cannot follow file:///nonexistent/repo.git: fatal:")
    assert "does not appear to be a git repository" in error  # what git said, not a stray quote
    # A password in the URL is never printed, whatever git says about the URL.
    result = CliRunner().invoke(cli, [*LEXICAL, "refresh", "http://me:hunter2pass@127.0.0.1:9/x.git", "--ci"])
    assert result.exit_code == 5 and "hunter2pass" not in result.output
    assert "cannot follow http://me:***@127.0.0.1:9/x.git: " in json.loads(result.output)["error"]


@pytest.mark.slow
def test_auto_refresh_brings_the_store_up_to_date_before_retrieving(
    make_repo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(BASE)
    runner = CliRunner()
    assert runner.invoke(cli, [*LEXICAL, "build", str(root), "--no-llm"]).exit_code == 0
    commit(
        root,
        {
            "shop/discounts.py": '"""Discounts."""\n\n\ndef seasonal_discount(amount):\n'
            "    return amount * 0.9\n"
        },
        "discounts",
    )
    question = [*LEXICAL, "retrieve", "--repo", str(root), "--format", "json", "seasonal discount"]
    stale = json.loads(runner.invoke(cli, question).output)
    assert "shop/discounts.py" not in {item["path"] for item in stale["items"]}
    monkeypatch.setenv("KB_AUTO_REFRESH", "1")
    result = runner.invoke(cli, question)
    assert result.exit_code == 0, result.output
    assert "kbc: refreshed the store first (incremental: 1 of 5 files changed" in result.output
    fresh = json.loads(result.output[result.output.index("{") :])
    assert fresh["items"][0]["path"] == "shop/discounts.py"


@pytest.mark.slow
def test_a_plain_directory_is_refreshed_by_content(make_repo: Any) -> None:
    root = make_repo(BASE, use_git=False)
    assert refresh(str(root), settings(), no_llm=True).mode == "full"
    changed = '"""Payments."""\n\n\ndef charge(amount):\n    return amount\n'
    (root / "shop" / "payments.py").write_text(changed)
    second = refresh(str(root), settings(), no_llm=True)
    assert (second.mode, second.reason) == ("incremental", "not a git repository: files compared by content")
    assert second.build is not None and second.build.analyze.parsed == 1


def test_an_up_to_date_refresh_still_repairs_a_damaged_index(make_repo: Any) -> None:
    root = make_repo(
        {"shop/__init__.py": "", "shop/orders.py": "def cancel(order_id):\n    return order_id\n"}
    )
    refresh(str(root), settings())
    assert refresh(str(root), settings()).mode == "up-to-date"
    (root / ".kbc" / "index" / "lexical.sqlite").write_bytes(b"torn" * 50)
    repaired = refresh(str(root), settings())
    assert repaired.mode == "incremental"
    assert repaired.reason.startswith("no file changed, but the lexical index")
    assert "is damaged" in repaired.reason
    lexical = LexicalIndex(root / ".kbc" / "index" / "lexical.sqlite")
    paths = {c.path for c in lexical.all_chunks()}
    lexical.close()
    assert {p for p in paths if not p.startswith("@views/")} == {"shop/orders.py"}
    assert "@views/architecture.md" in paths
    assert refresh(str(root), settings()).mode == "up-to-date"
    lexical = LexicalIndex(root / ".kbc" / "index" / "lexical.sqlite")
    lexical.db.execute("PRAGMA user_version = 1")  # as another kbc version leaves it
    lexical.db.commit()
    lexical.close()
    again = refresh(str(root), settings())
    assert (again.mode, again.reason) == (
        "incremental",
        "no file changed, but the lexical index was written by another kbc version",
    )
    rebuilt = LexicalIndex(root / ".kbc" / "index" / "lexical.sqlite")
    assert not rebuilt.stale and rebuilt.chunk_ids()
    rebuilt.close()
