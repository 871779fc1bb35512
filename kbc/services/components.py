"""The composition root: the parts behind kbc's seams (embedder, vector store, LLM interpreter,
token counter), each built from the settings unless one is given.

A :class:`KnowledgeBase` and the use-case functions beside it take one
:class:`Components`; a test or an embedding application passes its own parts there
(``Components.lexical()`` for lexical retrieval, an :class:`Embedding` with an embedder it
loaded once, an interpreter that talks to its own server) instead of changing the
environment. The git port (:mod:`kbc.analyzers.gitrepo`), the SQLite and atomic-write
helpers (:mod:`kbc.store.files`) and the store layout (:mod:`kbc.store.layout`) are modules,
not parts: there is one of each.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kbc.domain.errors import EmbedderUnavailable
from kbc.domain.settings import Settings
from kbc.index.embed import Embedder, model_name, open_embedder
from kbc.index.tokencount import TokenCounter, default_counter
from kbc.index.vectors import LazyVectorStore, VectorStore, open_advised, open_or_set_aside
from kbc.retrieval.rerank import PLUGIN_PREFIX, LLMReranker, Reranker, plugin
from kbc.store.layout import chroma_dir, index_dir
from kbc.views.llm import Interpreter, LiteLLMInterpreter, interpreter_from

LEXICAL_NOTE = "embeddings are not used: retrieval is lexical"


@dataclass(frozen=True, slots=True)
class Embedding:
    """An embedder given rather than loaded from ``index.embed_model``: None makes retrieval
    lexical (``note`` says why); ``vectors`` None keeps the vector store the settings name
    (the local Chroma store, or ``index.chroma_url``), opened with this embedder."""

    embedder: Embedder | None
    vectors: VectorStore | None = None
    note: str = ""


@dataclass(frozen=True, slots=True)
class Components:
    """The parts a knowledge base is built from; a part left at None is built from the settings."""

    embedding: Embedding | None = None
    interpreter: Interpreter | None = None
    counter: TokenCounter | None = None
    reranker: Reranker | None = None

    @classmethod
    def lexical(cls, note: str = LEXICAL_NOTE) -> Components:
        """No embedder: the index is lexical only, and retrieval says ``note``."""
        return cls(embedding=Embedding(None, note=note))

    def token_counter(self) -> TokenCounter:
        return self.counter if self.counter is not None else default_counter()

    def llm(self, settings: Settings, no_llm: bool = False) -> Interpreter | None:
        """The interpreter that writes prose and answers: the given one, else the one
        ``llm.model`` names, else (none configured, or ``no_llm``) None."""
        if no_llm:
            return None
        if self.interpreter is not None:
            return self.interpreter
        return interpreter_from(
            settings.llm_model,
            settings.llm_api_base,
            settings.llm_timeout,
            settings.llm_retries,
            settings.llm_api_key,
        )

    def rerank(self, settings: Settings) -> Reranker | None:
        """The reranker: the given one, else the one ``retrieval.rerank_model`` names (a chat
        model behind litellm, or ``plugin:NAME``), else None (the fused order)."""
        if self.reranker is not None:
            return self.reranker
        model = settings.rerank_model.strip()
        if not model:
            return None
        if model.startswith(PLUGIN_PREFIX):
            return plugin(model.removeprefix(PLUGIN_PREFIX))
        chat = LiteLLMInterpreter(
            model,
            api_base=settings.rerank_api_base or settings.llm_api_base,
            api_key=settings.llm_api_key,
            timeout=settings.rerank_timeout,
            retries=0,
        )
        return LLMReranker(chat)

    def open_embedding(
        self,
        store_root: Path,
        repo_root: Path,
        settings: Settings,
        *,
        recover: bool = False,
        lazy: bool = False,
    ) -> tuple[Embedder | None, VectorStore | None, str]:
        """The embedder and vector store, or (None, None, why not): retrieval then is lexical.

        With ``recover`` (a build), a Chroma store that cannot be opened, or whose vectors were
        made otherwise than the embedder makes them (another width, or another model under its
        name), is set aside (:func:`kbc.index.vectors.open_or_set_aside`). With
        ``lazy`` (retrieval, which mostly reads the exact-search snapshot), the store is
        opened, and Chroma imported, only when it is first used.
        """
        given = self.embedding
        if given is not None and given.embedder is None:
            return None, None, given.note or LEXICAL_NOTE
        if given is not None and given.vectors is not None:
            return given.embedder, given.vectors, given.note
        name = model_name(settings.embed_model)
        url = settings.chroma_url
        if given is not None and given.embedder is not None:
            embedder = given.embedder
            name = ""  # the store names its collection by the embedder's model id
        else:
            try:
                embedder = open_embedder(
                    name,
                    settings.embed_tokens,
                    settings.cache_dir,
                    for_queries=lazy,
                    api_base=settings.embed_api_base,
                    api_key=settings.llm_api_key,
                )
            except EmbedderUnavailable as exc:
                return None, None, exc.message
        where = index_dir(store_root)
        if lazy:
            return embedder, LazyVectorStore(lambda: open_advised(where, repo_root, embedder, name, url)), ""
        if not url and not chroma_dir(where).exists():  # nothing to recover, nor to read: open when written
            return (
                embedder,
                LazyVectorStore(lambda: open_advised(where, repo_root, embedder, name, url), empty=True),
                "",
            )
        try:
            vectors, note = open_or_set_aside(where, repo_root, embedder, name, url, recover=recover)
        except EmbedderUnavailable as exc:  # asked what makes its vectors, the model failed
            return None, None, exc.message
        return (embedder, vectors, note) if vectors is not None else (None, None, note)


CONFIGURED = Components()  # every part from the settings
