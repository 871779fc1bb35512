"""The Interpreter seam: an LLM behind litellm (:mod:`kbc.providers.litellm_api`), with
timeouts, retries and backoff."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Protocol

from kbc.domain.errors import LLMError
from kbc.providers import litellm_api

# Errors worth another try: the server may answer next time. Others (a bad key, an unknown
# model, a rejected request) fail at once.
_RETRYABLE = (
    "Timeout",
    "APIConnectionError",
    "RateLimitError",
    "InternalServerError",
    "ServiceUnavailableError",
    "APIError",
    "BadGatewayError",
)


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0  # USD, 0 when litellm does not know the model's price


class Interpreter(Protocol):
    @property
    def model(self) -> str: ...

    def complete(self, messages: list[dict[str, str]], json_output: bool = True) -> Completion: ...


class LiteLLMInterpreter:
    def __init__(
        self,
        model: str,
        *,
        api_base: str = "",
        api_key: str = "",
        timeout: float = 60,
        retries: int = 2,
        backoff: float = 0.5,
    ) -> None:
        self._model = model
        self._api_base = api_base
        self._api_key = api_key
        self._timeout = timeout
        self._retries = retries
        self._backoff = backoff

    @property
    def model(self) -> str:
        return self._model

    def complete(self, messages: list[dict[str, str]], json_output: bool = True) -> Completion:
        """One completion; ``json_output`` asks the provider for a JSON object."""
        options: dict[str, Any] = {"timeout": self._timeout, "temperature": 0, "num_retries": 0}
        if json_output:
            options["response_format"] = {"type": "json_object"}
        if self._api_base:
            options["api_base"] = self._api_base
        if self._api_key:
            options["api_key"] = self._api_key
        attempt = 0
        while True:
            try:
                response = litellm_api.completion(self._model, messages, **options)
                break
            except Exception as exc:  # litellm maps every provider error to its own classes
                kind = type(exc).__name__
                if attempt >= self._retries or not kind.endswith(_RETRYABLE):
                    tries = f" after {attempt + 1} attempts" if attempt else ""
                    raise LLMError(f"{kind}{tries}: {_first_line(exc)}") from exc
                time.sleep(self._backoff * 2**attempt)
                attempt += 1
        text = response.choices[0].message.content or ""
        usage = getattr(response, "usage", None)
        cost = litellm_api.cost(response)
        return Completion(
            text,
            int(getattr(usage, "prompt_tokens", 0) or 0),
            int(getattr(usage, "completion_tokens", 0) or 0),
            cost,
        )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def interpreter_from(
    model: str, api_base: str, timeout: int, retries: int, api_key: str = ""
) -> LiteLLMInterpreter | None:
    """The configured interpreter, or None when no model is set (prose then comes from docstrings)."""
    if not model:
        return None
    return LiteLLMInterpreter(model, api_base=api_base, api_key=api_key, timeout=timeout, retries=retries)
