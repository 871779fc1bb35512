"""Embeddings from a model behind an API, through litellm: the team's own model server
(``ollama/...``), a gateway, or a provider (``openai/...``). ``index.embed_model`` names the
model and ``index.embed_api_base`` where it answers; both come only from the user
(configuration, environment, ``-c``), never from the repository. Units are keyed by the
model's name, like the packaged model's, and the vectors by what the name answers: the width
and the vector of a fixed probe text (:mod:`kbc.index.provenance`), asked once per embedder;
an answer of another width than the probe's is refused. A failure is an
:class:`EmbedderUnavailable`, which leaves the index lexical with the reason in its note."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kbc.domain.errors import EmbedderUnavailable
from kbc.index.provenance import PROBE, Provenance, folded

# litellm's providers that serve embeddings: a name starting "<provider>/" is one of these models.
PROVIDERS = frozenset(
    {
        "openai",
        "azure",
        "ollama",
        "cohere",
        "voyage",
        "mistral",
        "bedrock",
        "vertex_ai",
        "gemini",
        "huggingface",
        "together_ai",
        "jina_ai",
        "litellm_proxy",
        "nvidia_nim",
        "fireworks_ai",
        "hosted_vllm",
        "lm_studio",
        "infinity",
        "text-completion-openai",
    }
)
BATCH = 64  # texts per request
RETRIES = 2  # litellm's retries of a failed request
TIMEOUT = 60.0  # seconds of one request


def is_remote(name: str) -> bool:
    """Whether ``name`` names a model behind an API (``provider/model``)."""
    provider, slash, model = name.partition("/")
    return bool(slash and model) and provider.lower() in PROVIDERS


class RemoteEmbedder:
    """An embedding model reached through litellm, ``batch`` texts a request."""

    def __init__(
        self,
        name: str,
        api_base: str = "",
        api_key: str = "",
        *,
        batch: int = BATCH,
        retries: int = RETRIES,
        timeout: float = TIMEOUT,
    ) -> None:
        self.model_id = name
        self._api_base = api_base
        self._api_key = api_key
        self._batch = max(1, batch)
        self._retries = retries
        self._timeout = timeout
        self._dim: int | None = None
        self._provenance: Provenance | None = None

    @property
    def dim(self) -> int:
        return self.provenance().width

    def provenance(self) -> Provenance:
        """The width and the probe text's vector, asked of the model on first use."""
        if self._provenance is None:
            (vector,) = self._request([PROBE])
            self._provenance = Provenance(self.model_id, len(vector), folded(vector))
        return self._provenance

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch):
            vectors.extend(self._request(list(texts[start : start + self._batch])))
        return vectors

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embed(texts)

    def _request(self, texts: list[str]) -> list[list[float]]:
        from kbc.providers import litellm_api

        extra: dict[str, Any] = {}
        if self._api_base:
            extra["api_base"] = self._api_base
        if self._api_key:
            extra["api_key"] = self._api_key
        where = self._api_base or "its provider"
        try:
            response = litellm_api.embedding(
                self.model_id, texts, timeout=self._timeout, num_retries=self._retries, **extra
            )
            data = response.data if hasattr(response, "data") else response["data"]
            vectors = [
                list(map(float, item["embedding"] if isinstance(item, dict) else item.embedding))
                for item in sorted(data, key=_index)
            ]
        except Exception as exc:
            message = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
            raise EmbedderUnavailable(
                f"the embedding model {self.model_id} at {where} failed: {message}",
                hint="check index.embed_model, index.embed_api_base and the key "
                "(KBC_LLM_API_KEY); `kbc embed` finishes the vectors once it "
                "answers",
            ) from None
        if len(vectors) != len(texts) or any(len(v) != len(vectors[0]) for v in vectors):
            raise EmbedderUnavailable(
                f"the embedding model {self.model_id} at {where} answered "
                f"{len(vectors)} vectors for {len(texts)} texts",
                hint="check that it is an embedding model",
            )
        if self._dim is None:
            self._dim = len(vectors[0])
        elif len(vectors[0]) != self._dim:
            raise EmbedderUnavailable(
                f"the embedding model {self.model_id} at {where} answered {len(vectors[0])}-wide "
                f"vectors, {self._dim}-wide before: another model answers under its name",
                hint="run `kbc build` again: it sets the vectors made before aside and embeds again",
            )
        return vectors


def _index(item: Any) -> int:
    found = item.get("index", 0) if isinstance(item, dict) else getattr(item, "index", 0)
    return int(found or 0)
