"""The vector store: a Chroma collection per repository, local or on a server.

``KBC_CHROMA_URL`` (``http://host:port``) selects a Chroma server; otherwise
a ``PersistentClient`` keeps the collection under the store. Telemetry is off
and the collection always carries kbc's own embedding function, so Chroma
never reaches for its downloading default.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlparse

from kbc.domain.errors import VectorStoreError
from kbc.domain.settings import quiet_dependencies
from kbc.index.embed import Embedder
from kbc.store.layout import chroma_dir

ADD_BATCH = 1000
PAGE = 5000  # rows read from the store per request


class VectorStore(Protocol):
    def ids(self) -> set[str]: ...

    def add(
        self,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]],
        metadatas: Sequence[dict[str, Any]],
        documents: Sequence[str],
    ) -> None:
        """Store units the store does not hold yet."""
        ...

    def delete(self, ids: Sequence[str]) -> None: ...

    def vectors(self, ids: Sequence[str] | None) -> dict[str, tuple[str, list[float]]]:
        """Unit id -> (chunk id, vector) for ``ids`` (None: every unit) the store holds."""
        ...

    def embeddings(self, ids: Sequence[str]) -> dict[str, list[float]]:
        """Unit id -> vector for the ``ids`` the store holds (no metadata read: faster)."""
        ...

    def documents(self) -> list[str]: ...


class KbcEmbeddingFunction:
    """kbc's embedder in the shape Chroma expects of an embedding function.

    Registered with Chroma under the name ``kbc`` and rebuilt from its config
    (the model name), so a collection reopened anywhere keeps kbc's embedder.
    """

    def __init__(self, model: str, embedder: Embedder | None = None) -> None:
        self.model = model
        self._embedder = embedder

    def _model(self) -> Embedder:
        if self._embedder is None:
            from kbc.index.embed import load_embedder

            self._embedder = load_embedder(self.model)
        return self._embedder

    def __call__(self, input: Sequence[str]) -> list[list[float]]:
        return self._model().embed(input)

    def embed_query(self, input: Sequence[str]) -> list[list[float]]:
        return self._model().embed_query(input)

    @staticmethod
    def name() -> str:
        return "kbc"

    def is_legacy(self) -> bool:
        return False

    def default_space(self) -> str:
        return "cosine"

    def supported_spaces(self) -> list[str]:
        return ["cosine"]

    def get_config(self) -> dict[str, Any]:
        return {"model": self.model}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> KbcEmbeddingFunction:
        return KbcEmbeddingFunction(str(config.get("model", "")))

    @staticmethod
    def validate_config(config: dict[str, Any]) -> None:
        return None

    def validate_config_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        return None


_registered = False


def _register() -> None:
    global _registered
    if not _registered:
        from chromadb.utils.embedding_functions import register_embedding_function

        register_embedding_function(KbcEmbeddingFunction)  # type: ignore[no-untyped-call]
        _registered = True


def collection_name(repo_root: str, model_id: str) -> str:
    digest = hashlib.sha256(f"{repo_root}\0{model_id}".encode()).hexdigest()[:16]
    return f"kbc-{digest}"


def _adopt_earlier(client: Any, name: str) -> None:
    """A local store whose one collection has another name (named for the repository's path
    by earlier versions, or for another model) keeps it under ``name``: its vectors are
    addressed by content and model, so the build keeps those that still hold and embeds
    only the rest, instead of starting a second collection beside it."""
    names = [c if isinstance(c, str) else c.name for c in client.list_collections()]
    if name in names:
        return
    earlier = [n for n in names if n.startswith("kbc-")]
    if len(earlier) == 1:
        client.get_collection(earlier[0]).modify(name=name)


class ChromaStore:
    def __init__(self, client: Any, name: str, embedder: Embedder, embedder_name: str) -> None:
        self._collection = client.get_or_create_collection(
            name=name,
            embedding_function=KbcEmbeddingFunction(embedder_name, embedder),
            metadata={"hnsw:space": "cosine"},
        )

    def ids(self) -> set[str]:
        found: set[str] = set()
        offset = 0
        while True:
            page = self._collection.get(include=[], limit=PAGE, offset=offset)
            found.update(page["ids"])
            if len(page["ids"]) < PAGE:
                return found
            offset += PAGE

    def add(
        self,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]],
        metadatas: Sequence[dict[str, Any]],
        documents: Sequence[str],
    ) -> None:
        for start in range(0, len(ids), ADD_BATCH):
            end = start + ADD_BATCH
            # ``add``, not ``upsert``: the ids are new, and an upsert looks each one up first.
            self._collection.add(
                ids=list(ids[start:end]),
                embeddings=[list(v) for v in vectors[start:end]],
                metadatas=list(metadatas[start:end]),
                documents=list(documents[start:end]),
            )

    def delete(self, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), ADD_BATCH):
            self._collection.delete(ids=list(ids[start : start + ADD_BATCH]))

    def vectors(self, ids: Sequence[str] | None) -> dict[str, tuple[str, list[float]]]:
        pages: list[Any] = []
        if ids is None:
            offset = 0
            while not pages or len(pages[-1]["ids"]) == PAGE:
                pages.append(
                    self._collection.get(include=["embeddings", "metadatas"], limit=PAGE, offset=offset)
                )
                offset += PAGE
        else:
            pages = [
                self._collection.get(ids=list(ids[start : start + PAGE]), include=["embeddings", "metadatas"])
                for start in range(0, len(ids), PAGE)
            ]
        found: dict[str, tuple[str, list[float]]] = {}
        for page in pages:
            for unit, vector, metadata in zip(
                page["ids"], page["embeddings"], page["metadatas"], strict=True
            ):
                found[unit] = (str((metadata or {}).get("chunk_id", "")), _floats(vector))
        return found

    def embeddings(self, ids: Sequence[str]) -> dict[str, list[float]]:
        found: dict[str, list[float]] = {}
        for start in range(0, len(ids), PAGE):
            page = self._collection.get(ids=list(ids[start : start + PAGE]), include=["embeddings"])
            for unit, vector in zip(page["ids"], page["embeddings"], strict=True):
                found[unit] = _floats(vector)
        return found

    def documents(self) -> list[str]:
        page = self._collection.get(include=["documents"])
        return [d or "" for d in page["documents"] or []]


def _floats(vector: Any) -> list[float]:
    """A vector as Python floats (Chroma gives numpy rows: ``tolist`` converts them at C speed)."""
    if hasattr(vector, "tolist"):
        return list(vector.tolist())
    return [float(x) for x in vector]


class LazyVectorStore:
    """A vector store opened on first use; opening raises VectorStoreError then."""

    def __init__(self, opener: Callable[[], VectorStore], *, empty: bool = False) -> None:
        """``empty``: the store does not exist yet, so it holds nothing until it is written."""
        self._opener = opener
        self._store: VectorStore | None = None
        self._empty = empty

    def _opened(self) -> VectorStore:
        if self._store is None:
            self._store = self._opener()
        return self._store

    def _unwritten(self) -> bool:
        return self._store is None and self._empty

    def ids(self) -> set[str]:
        return set() if self._unwritten() else self._opened().ids()

    def add(
        self,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]],
        metadatas: Sequence[dict[str, Any]],
        documents: Sequence[str],
    ) -> None:
        self._opened().add(ids, vectors, metadatas, documents)

    def delete(self, ids: Sequence[str]) -> None:
        if not self._unwritten():
            self._opened().delete(ids)

    def vectors(self, ids: Sequence[str] | None) -> dict[str, tuple[str, list[float]]]:
        return {} if self._unwritten() else self._opened().vectors(ids)

    def embeddings(self, ids: Sequence[str]) -> dict[str, list[float]]:
        return {} if self._unwritten() else self._opened().embeddings(ids)

    def documents(self) -> list[str]:
        return [] if self._unwritten() else self._opened().documents()


def forget_local_store(path: Path) -> None:
    """Drop the client Chroma keeps for the local store at ``path`` (it keeps one per path,
    even one that failed to open), so the path can be opened afresh in this process."""
    try:
        from chromadb.api.shared_system_client import SharedSystemClient
    except ImportError:
        return
    with SharedSystemClient._refcount_lock:
        for key in {str(path), str(path.resolve())}:
            SharedSystemClient._identifier_to_system.pop(key, None)
            SharedSystemClient._identifier_to_refcount.pop(key, None)


def _settings() -> Any:
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False, allow_reset=False)


def open_vector_store(
    store_dir: Path, repo_root: str, embedder: Embedder, url: str = "", embedder_name: str = ""
) -> VectorStore:
    """The repository's collection: on the Chroma server at ``url``, else local."""
    quiet_dependencies()
    embedder_name = embedder_name or embedder.model_id
    try:
        import chromadb
    except ImportError as exc:
        raise VectorStoreError("chromadb is not installed", hint="pip install chromadb") from exc
    # A local store holds one repository's collection, named for the model alone, so a store
    # copied or a repository moved keeps its vectors; a server's holds many, named for each.
    name = collection_name("" if not url else repo_root, embedder.model_id)
    _register()
    try:
        if url:
            parts = urlparse(url)
            client = chromadb.HttpClient(
                host=parts.hostname or "127.0.0.1",
                port=parts.port or 8000,
                ssl=parts.scheme == "https",
                settings=_settings(),
            )
        else:
            path = chroma_dir(store_dir)
            path.mkdir(parents=True, exist_ok=True)
            client = chromadb.PersistentClient(path=str(path), settings=_settings())
            _adopt_earlier(client, name)
        return ChromaStore(client, name, embedder, embedder_name)
    except Exception as exc:
        where = url or str(chroma_dir(store_dir))
        raise VectorStoreError(
            f"the Chroma store at {where} cannot be used: {exc}",
            hint="check KBC_CHROMA_URL, or unset it for the local store",
        ) from exc


def open_advised(
    where: Path, repo_root: Path, embedder: Embedder, name: str, url: str, advise: bool = True
) -> VectorStore:
    """The store of the index folder ``where``; when a local one cannot be opened, ``advise``
    adds what fixes it."""
    try:
        return open_vector_store(where, str(repo_root.resolve()), embedder, url=url, embedder_name=name)
    except VectorStoreError as exc:
        if not advise or url or not chroma_dir(where).exists():
            raise
        raise VectorStoreError(
            f"{exc.message}; `kbc build` moves it aside and embeds again", hint=exc.hint
        ) from exc


def open_or_set_aside(
    where: Path, repo_root: Path, embedder: Embedder, name: str, url: str, *, recover: bool
) -> tuple[VectorStore | None, str]:
    """The store, and a note; or None and why not. With ``recover`` (a build, which holds the
    writer lock), a local Chroma store that cannot be opened is moved aside, never deleted,
    and a new one is started: its vectors are embedded again, and the note says where the old
    one went."""
    try:
        return open_advised(where, repo_root, embedder, name, url, advise=not recover), ""
    except VectorStoreError as exc:
        local = chroma_dir(where)
        if not recover or url or not local.exists():
            return None, exc.message
        aside = where / f"chroma.broken-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
        forget_local_store(local)
        local.rename(aside)
        try:
            vectors = open_advised(where, repo_root, embedder, name, url)
        except VectorStoreError as again:
            return None, again.message
        return vectors, (
            f"{exc.message}; it was moved to {aside} and the vectors are embedded again "
            "(delete it once you no longer need it)"
        )
