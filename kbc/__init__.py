"""kbc: a knowledge-base compiler for coding agents.

The Python API::

    from kbc import KnowledgeBase

    kb = KnowledgeBase("path/to/repo")
    kb.build()                      # or kb.refresh()
    print(kb.retrieve("add a refund endpoint", use_case="implementation", budget=8000).text)
    answer, _ = kb.ask("how are refunds validated?")

Names are imported on first use, so ``import kbc`` stays instant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Answer", "KbcError", "KnowledgeBase", "Slice", "__version__"]

if TYPE_CHECKING:
    from kbc.domain.errors import KbcError
    from kbc.retrieval.answer import Answer
    from kbc.retrieval.results import Slice
    from kbc.services.knowledge import KnowledgeBase

_LAZY = {
    "KnowledgeBase": "kbc.services.knowledge",
    "Slice": "kbc.retrieval.retrieve",
    "Answer": "kbc.retrieval.answer",
    "KbcError": "kbc.domain.errors",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'kbc' has no attribute {name!r}")
