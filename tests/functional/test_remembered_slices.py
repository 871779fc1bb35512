"""A server's reader keeps the lexical index's scores in memory and ranks from them: its slices
are byte for byte those of `kbc retrieve`, which asks FTS5 every time, before and after a
refresh of one file."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from helpers import git, write_tree

from kbc.domain.settings import Settings
from kbc.services.build import build_repository
from kbc.services.components import Components
from kbc.services.knowledge import KnowledgeBase
from kbc.services.refresh import refresh
from kbc.services.retrieve import open_retriever

WORDS = "order refund payment charge window customer money tax cart invoice ledger audit".split()


def repository(seed: int) -> dict[str, str]:
    """Modules of functions named and written from a few words (many alike), and two copies
    of one module (units tied on every score)."""
    rng = random.Random(seed)
    files: dict[str, str] = {"shop/__init__.py": '"""Shop."""\n'}
    for n in range(24):
        body = []
        for m in range(rng.randint(2, 6)):
            name = "_".join(rng.sample(WORDS, 2))
            said = " ".join(rng.choices(WORDS, k=rng.randint(3, 12)))
            body.append(f'def {name}_{m}(amount):\n    """{said}."""\n    return amount\n')
        files[f"shop/part{n}.py"] = f'"""{" ".join(rng.sample(WORDS, 3))}."""\n\n\n' + "\n\n".join(body)
    twin = 'def refund_window(order):\n    """A refund inside its window."""\n    return order\n'
    files["shop/twin_a.py"] = twin
    files["shop/twin_b.py"] = twin
    return files


def settings() -> Settings:
    return Settings(workers=1, full_rebuild_fraction=1.0, embed_model="none")


def queries(root: Path) -> list[str]:
    words = sorted({w for p in root.rglob("*.py") for w in p.read_text().replace("_", " ").split()})
    long_task = (
        " ".join(random.Random(3).sample(words, min(len(words), 150)))
        + " "
        + " ".join(f"extra{n}" for n in range(150))
    )
    return [
        "where is a refund inside its window checked?",
        "refund window",
        "invoice ledger audit tax",
        long_task,  # an issue-length task: 150 and more distinct terms
        "nothing of the shop",
    ]


def slices(kb: KnowledgeBase, root: Path, asked: list[str]) -> tuple[list[str], list[str]]:
    """What the served reader and a fresh `kbc retrieve`-like reader give for ``asked``."""
    plain = open_retriever(root, settings(), components=Components.lexical())
    try:
        profile = kb.use_cases.named("implementation")
        one_shot = [plain.retrieve(task, profile).to_json() for task in asked]
    finally:
        plain.close()
    return [kb.retrieve(task).to_json() for task in asked], one_shot


def test_a_served_reader_gives_the_slices_of_kbc_retrieve_before_and_after_a_refresh(make_repo: Any) -> None:
    root = make_repo(repository(5))
    build_repository(root, settings(), no_llm=True)
    asked = queries(root)
    with KnowledgeBase(root, settings=settings(), components=Components.lexical()) as kb:
        assert kb.served.retriever().lexical._remembered is not None  # the server's reader remembers
        served, one_shot = slices(kb, root, asked + asked)  # asked twice: from memory the second time
        assert served == one_shot
        found = kb.served.retriever().lexical.search("refund window", 200)
        tied = [score for _, score in found if score == found[0][1]]
        assert len(tied) >= 2  # the twins: their order is decided by id, as FTS5's is

        write_tree(
            root, {"shop/part3.py": repository(6)["shop/part3.py"] + "\n\ndef audit_refund():\n    pass\n"}
        )
        git(root, "commit", "-qam", "one file changed")
        assert refresh(str(root), settings(), no_llm=True).mode == "incremental"
        served_after, one_shot_after = slices(kb, root, asked)
        assert served_after == one_shot_after
        assert served_after != served[: len(asked)]  # the reader follows the refreshed index
