"""A branch switch is a refresh: switched to another branch and back, the store equals a cold
build of the commit checked out, and each refresh parses, chunks and embeds only what differs
from a state the store has seen (the caches and the vectors are keyed by content)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import git, store_snapshot, write_tree

from kbc import KnowledgeBase
from kbc.domain.settings import Settings
from kbc.index.embed import model_name
from kbc.index.lexical import LexicalIndex
from kbc.index.retired import retired_units
from kbc.index.units import units_of
from kbc.services.build import build_repository
from kbc.services.refresh import refresh

SHOP = {
    "shop/__init__.py": '"""Shop."""\n',
    "shop/orders.py": '''
        """Orders."""
        from shop.payments import charge


        def place(amount):
            """Place an order and charge for it."""
            return charge(amount)
    ''',
    "shop/payments.py": '''
        """Payments."""


        def charge(amount):
            """Charge an amount to the card on file."""
            return {"charged": amount}
    ''',
    "shop/stock.py": '''
        """Stock levels."""


        def reserve(item, count):
            """Hold ``count`` of ``item`` for an order."""
            return {item: count}
    ''',
    "shop/cli.py": '''
        """Command line."""
        from shop.orders import place


        def main():
            place(1)
    ''',
    "docs/shop.md": "# Shop\n\nHow orders work.\n",
}
FEATURE = {
    "shop/orders.py": SHOP["shop/orders.py"]
    + '''

        def cancel(order_id):
            """Cancel an order before it ships."""
            return order_id
    ''',
    "shop/refunds.py": '''
        """Refunds."""


        def refund(amount):
            """Give an amount back within the refund window."""
            return -amount
    ''',
    "docs/shop.md": "# Shop\n\nHow orders, cancellations and refunds work.\n",
}
TASK = "cancel an order and refund the amount"


def settings() -> Settings:
    """Embeddings on (the packaged model); half the files differ between the branches, so a
    switch is past the drift threshold and takes the full path."""
    return Settings(workers=1, full_rebuild_fraction=0.3, auto_refresh=False)


def exact(store_root: Path, root: Path) -> dict[str, Any]:
    """What must equal a cold build's: the store's facts, chunks, views and precedents, each
    file's record (its blob and last commit date), the vectors the index names, and a slice."""
    lexical = LexicalIndex(store_root / "index" / "lexical.sqlite")
    try:
        records = lexical.files()
        vectors = lexical.meta("vectors")
    finally:
        lexical.close()
    with KnowledgeBase(root, settings=settings()) as kb:
        text = kb.retrieve(TASK).text
    return {**store_snapshot(store_root), "records": records, "vectors": vectors, "slice": text}


def cold(source: Path, commit_id: str, tmp_path: Path) -> dict[str, Any]:
    """A cold build of ``commit_id`` in a fresh clone whose folder has the same name."""
    clone = tmp_path / f"cold-{commit_id[:8]}" / source.name
    clone.parent.mkdir()
    subprocess.run(["git", "clone", "-q", str(source), str(clone)], check=True)
    git(clone, "checkout", "-q", commit_id)
    build_repository(clone, settings(), no_llm=True, wait=True)
    return exact(clone / ".kbc", clone)


def unit_ids(store_root: Path) -> set[str]:
    """The units of the index, named as the model that embedded them names them."""
    lexical = LexicalIndex(store_root / "index" / "lexical.sqlite")
    try:
        model = lexical.meta("model")
        assert model.startswith(model_name())
        return {u.id for u in units_of(lexical.all_chunks(), model, tests=settings().embed_tests)}
    finally:
        lexical.close()


@pytest.mark.slow
def test_a_switch_and_a_switch_back_cost_what_changed_and_equal_cold_builds(
    make_repo: Any, tmp_path: Path
) -> None:
    root = make_repo(SHOP)
    store = root / ".kbc"
    main = git(root, "rev-parse", "HEAD").strip()
    git(root, "checkout", "-q", "-b", "feature")
    git(root, "rm", "-q", "shop/cli.py")
    write_tree(root, FEATURE)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "cancel orders; refunds")
    feature = git(root, "rev-parse", "HEAD").strip()
    git(root, "checkout", "-q", "main")

    first = refresh(str(root), settings(), no_llm=True)
    assert first.build is not None and first.build.index.retrieval == "hybrid"
    on_main = unit_ids(store)

    git(root, "checkout", "-q", "feature")
    to_feature = refresh(str(root), settings(), no_llm=True)
    assert to_feature.mode == "full" and to_feature.build is not None
    built = to_feature.build
    # parsed: the two Python files whose content is new; chunked: those and the document
    assert (built.analyze.parsed, built.analyze.cached) == (2, 3)
    assert (built.index.changed_files, built.index.chunks_from_cache, built.index.removed_files) == (3, 0, 1)
    on_feature = unit_ids(store)
    assert built.index.embedded == len(on_feature - on_main) > 0  # the new units alone
    assert exact(store, root) == cold(root, feature, tmp_path)
    # the vectors main needed and the feature does not are kept, retired, for a switch back
    assert on_main - on_feature and on_main - on_feature <= retired_units(store / "index")

    git(root, "checkout", "-q", "main")
    back = refresh(str(root), settings(), no_llm=True)
    assert back.mode == "full" and back.build is not None
    again = back.build
    assert (again.analyze.parsed, again.analyze.cached) == (0, 5)  # every file's facts were seen
    assert (again.index.changed_files, again.index.chunks_from_cache, again.index.removed_files) == (3, 3, 1)
    assert again.index.embedded == 0  # every unit of main's was kept
    assert unit_ids(store) == on_main
    assert exact(store, root) == cold(root, main, tmp_path)
    assert on_main & retired_units(store / "index") == set()  # needed again: no longer retired
