"""The vector store: a Chroma collection per repository, local or on a server.

``KBC_CHROMA_URL`` (``http://host:port``) selects a Chroma server; otherwise
a ``PersistentClient`` keeps the collection under the store. Telemetry is off
and the collection always carries kbc's own embedding function, so Chroma
never reaches for its downloading default.

A collection records what made the vectors it holds (its metadata ``made_by``,
:mod:`kbc.index.provenance`), and is opened only for a model that makes the same: for one
whose vectors are of another width, or (behind an API) another model under the same name,
opening raises :class:`VectorsChanged`, and nothing is read from or added to it. A build
sets such vectors aside and embeds every unit again; nothing is deleted. A local store is
moved aside whole (``chroma.aside-<time>`` beside it: delete it once it is no longer
needed); a collection on a Chroma server is renamed ``<name>-aside-<time>`` there. Either
way the vectors a background process was embedding for the old model
(``embedding.partial``) are discarded: they are a cache of work that is done again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlparse

from kbc.domain.errors import VectorStoreError
from kbc.domain.settings import quiet_dependencies
from kbc.index.embed import Embedder
from kbc.index.provenance import MADE_BY, Provenance
from kbc.store.layout import PARTIAL, chroma_dir

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

    def made_by(self) -> Provenance | None:
        """What made the vectors it holds (None: a store not written yet holds none)."""
        ...


class VectorsChanged(VectorStoreError):
    """The store's vectors were not made as the live model makes them."""


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
    def __init__(
        self, client: Any, name: str, embedder: Embedder, embedder_name: str, live: Provenance
    ) -> None:
        """The collection ``name``, created recording ``live``; one made before records were
        kept, or by another model, records ``live`` too where its vectors are as wide."""
        self._collection = client.get_or_create_collection(
            name=name,
            embedding_function=KbcEmbeddingFunction(embedder_name, embedder),
            metadata={"hnsw:space": "cosine", MADE_BY: live.to_json()},
        )
        metadata = dict(self._collection.metadata or {})
        recorded = Provenance.from_json(str(metadata.get(MADE_BY, "")))
        made = recorded or Provenance(live.model, self._width() or live.width)
        if not made.change(live) and (
            recorded is None or made.model != live.model or (live.probe and not made.probe)
        ):
            if recorded is not None and made.model == live.model:  # what it lacked: the probe
                live = dataclasses.replace(live, replaced=made.replaced)
            kept = {k: v for k, v in metadata.items() if not k.startswith("hnsw:")}
            self._collection.modify(metadata={**kept, MADE_BY: live.to_json()})
            made = live
        self._made = made

    def made_by(self) -> Provenance:
        return self._made

    def _width(self) -> int:
        """The width of the vectors held (0 when none are)."""
        page = self._collection.get(limit=1, include=["embeddings"])
        return len(page["embeddings"][0]) if page["ids"] else 0

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
            try:
                self._collection.add(
                    ids=list(ids[start:end]),
                    embeddings=[list(v) for v in vectors[start:end]],
                    metadatas=list(metadatas[start:end]),
                    documents=list(documents[start:end]),
                )
            except Exception as exc:  # say, vectors of another width than those it holds
                raise VectorStoreError(
                    f"the vector store refused the vectors: {exc}", hint="run `kbc build` again"
                ) from exc

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

    def made_by(self) -> Provenance | None:
        return None if self._unwritten() else self._opened().made_by()


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
    store_dir: Path,
    repo_root: str,
    embedder: Embedder,
    url: str = "",
    embedder_name: str = "",
    replaced: str = "",
) -> VectorStore:
    """The repository's collection: on the Chroma server at ``url``, else local. Its vectors
    were made as ``embedder`` makes them, or it raises :class:`VectorsChanged`. ``replaced``:
    why the vectors before were set aside, recorded by a collection created now. Asks the
    embedder what makes its vectors (a model behind an API embeds a probe text), which may
    raise EmbedderUnavailable."""
    live = embedder.provenance()
    # A local store holds one repository's collection, named for the model alone, so a store
    # copied or a repository moved keeps its vectors; a server's holds many, named for each.
    name = collection_name("" if not url else repo_root, embedder.model_id)
    try:
        client = _connect(store_dir, url, name)
        made = dataclasses.replace(live, replaced=replaced)
        store = ChromaStore(client, name, embedder, embedder_name or embedder.model_id, made)
    except VectorStoreError:
        raise
    except Exception as exc:
        raise _unusable(store_dir, url, exc) from exc
    change = store.made_by().change(live)
    if change:
        raise VectorsChanged(
            f"the vectors held cannot be used: {change}",
            hint="`kbc build` sets them aside and embeds every unit again",
        )
    return store


def _connect(store_dir: Path, url: str, name: str) -> Any:
    """A Chroma client of the server at ``url``, else of the local store (where a collection
    of an earlier name is adopted as ``name``)."""
    quiet_dependencies()
    try:
        import chromadb
    except ImportError as exc:
        raise VectorStoreError("chromadb is not installed", hint="pip install chromadb") from exc
    _register()
    if url:
        parts = urlparse(url)
        return chromadb.HttpClient(
            host=parts.hostname or "127.0.0.1",
            port=parts.port or 8000,
            ssl=parts.scheme == "https",
            settings=_settings(),
        )
    path = chroma_dir(store_dir)
    path.mkdir(parents=True, exist_ok=True)
    client = chromadb.PersistentClient(path=str(path), settings=_settings())
    _adopt_earlier(client, name)
    return client


def _unusable(store_dir: Path, url: str, exc: Exception) -> VectorStoreError:
    return VectorStoreError(
        f"the Chroma store at {url or chroma_dir(store_dir)} cannot be used: {exc}",
        hint="check KBC_CHROMA_URL, or unset it for the local store",
    )


def _stamped(name: str, taken: Callable[[str], bool]) -> str:
    """``name`` and the time, and a count where that is ``taken``."""
    stamped = f"{name}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
    found, count = stamped, 1
    while taken(found):
        count += 1
        found = f"{stamped}-{count}"
    return found


def open_advised(
    where: Path,
    repo_root: Path,
    embedder: Embedder,
    name: str,
    url: str,
    advise: bool = True,
    replaced: str = "",
) -> VectorStore:
    """The store of the index folder ``where``; when a local one cannot be opened, ``advise``
    adds what fixes it."""
    try:
        return open_vector_store(where, str(repo_root.resolve()), embedder, url, name, replaced)
    except VectorsChanged:
        raise
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
    writer lock), a store whose vectors were not made as the embedder makes them is set aside
    (a server's collection renamed, a local store moved), and a local store that cannot be
    opened is moved aside; nothing is deleted. A new one is started, its vectors embedded
    again, and the note says where the old one went."""
    try:
        return open_advised(where, repo_root, embedder, name, url, advise=not recover), ""
    except VectorsChanged as exc:
        if recover and url:
            return _set_aside_on_server(where, repo_root, embedder, name, url, exc.message)
        failure: VectorStoreError = exc
    except VectorStoreError as exc:
        failure = exc
    local = chroma_dir(where)
    if not recover or url or not local.exists():
        return None, failure.message
    changed = isinstance(failure, VectorsChanged)
    aside = where / _stamped(f"chroma.{'aside' if changed else 'broken'}", lambda n: (where / n).exists())
    forget_local_store(local)
    local.rename(aside)
    if changed:
        (where / PARTIAL).unlink(missing_ok=True)  # embedded for the vectors set aside
        note = f"{failure.message}; they were set aside (moved to {aside}) and every unit is embedded again"
    else:
        note = f"{failure.message}; it was moved to {aside} and the vectors are embedded again"
    note += " (delete it once you no longer need it)"
    try:
        vectors = open_advised(where, repo_root, embedder, name, url, replaced=note if changed else "")
    except VectorStoreError as again:
        return None, again.message
    return vectors, note


def _set_aside_on_server(
    where: Path, repo_root: Path, embedder: Embedder, name: str, url: str, why: str
) -> tuple[VectorStore | None, str]:
    """Rename the repository's collection on the server (its vectors changed: ``why``), and
    start a new one under its name."""
    collection = collection_name(str(repo_root.resolve()), embedder.model_id)
    try:
        client = _connect(where, url, collection)
        held = {c if isinstance(c, str) else c.name for c in client.list_collections()}
        aside = _stamped(f"{collection}-aside", held.__contains__)
        client.get_collection(collection).modify(name=aside)
    except VectorStoreError as exc:
        return None, exc.message
    except Exception as exc:
        return None, _unusable(where, url, exc).message
    (where / PARTIAL).unlink(missing_ok=True)  # embedded for the vectors set aside
    note = (
        f"{why}; they were set aside (the collection {aside} on the Chroma server) and every unit "
        "is embedded again"
    )
    try:
        return open_advised(where, repo_root, embedder, name, url, replaced=note), note
    except VectorStoreError as again:
        return None, again.message
