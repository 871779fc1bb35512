"""The Interpreter seam: an LLM behind litellm, with timeouts, retries and backoff.

litellm is imported on the first call (it takes seconds), with its cost map read from
the installed package rather than fetched.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Any, Protocol

from kbc.domain.errors import LLMError
from kbc.domain.settings import quiet_dependencies

# Errors worth another try: the server may answer next time. Others (a bad key, an unknown
# model, a rejected request) fail at once.
_RETRYABLE = ("Timeout", "APIConnectionError", "RateLimitError", "InternalServerError",
              "ServiceUnavailableError", "APIError", "BadGatewayError")


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


_OWNED_LOOPS: list[Any] = []


def _close_owned_loops() -> None:
    for loop in _OWNED_LOOPS:
        if not loop.is_closed():
            loop.close()


def _give_main_thread_a_loop() -> None:
    """litellm's blocking calls report their timing on the thread's current event loop and,
    in the main thread, create one that nobody closes when there is none. Hand it a loop
    that kbc owns and closes at exit instead."""
    import asyncio
    import atexit
    import threading

    if threading.current_thread() is not threading.main_thread():
        return  # elsewhere litellm finds no loop and runs its own, closed, with asyncio.run
    try:
        asyncio.get_running_loop()
        return
    except RuntimeError:
        pass
    current = getattr(getattr(asyncio.get_event_loop_policy(), "_local", None), "_loop", None)
    if current is not None and not current.is_closed():
        return
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    if not _OWNED_LOOPS:
        atexit.register(_close_owned_loops)
    _OWNED_LOOPS.append(loop)


def _import_litellm() -> Any:
    quiet_dependencies()
    import litellm

    litellm.telemetry = False
    litellm.suppress_debug_info = True
    return litellm


class LiteLLMInterpreter:
    def __init__(self, model: str, *, api_base: str = "", api_key: str = "", timeout: float = 60,
                 retries: int = 2, backoff: float = 0.5) -> None:
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
        litellm = _import_litellm()
        options: dict[str, Any] = {"timeout": self._timeout, "temperature": 0, "num_retries": 0}
        if json_output:
            options["response_format"] = {"type": "json_object"}
        if self._api_base:
            options["api_base"] = self._api_base
        if self._api_key:
            options["api_key"] = self._api_key
        attempt = 0
        _give_main_thread_a_loop()
        while True:
            try:
                with warnings.catch_warnings():  # litellm's lazily loaded types warn as they load
                    warnings.simplefilter("ignore")
                    response = litellm.completion(model=self._model, messages=messages, **options)
                break
            except Exception as exc:  # litellm maps every provider error to its own classes
                kind = type(exc).__name__
                if attempt >= self._retries or not kind.endswith(_RETRYABLE):
                    tries = f" after {attempt + 1} attempts" if attempt else ""
                    raise LLMError(f"{kind}{tries}: {_first_line(exc)}") from exc
                time.sleep(self._backoff * 2 ** attempt)
                attempt += 1
        text = response.choices[0].message.content or ""
        usage = getattr(response, "usage", None)
        try:
            cost = float(litellm.completion_cost(completion_response=response) or 0.0)
        except Exception:  # an unpriced model (a local server) has no cost
            cost = 0.0
        return Completion(text, int(getattr(usage, "prompt_tokens", 0) or 0),
                          int(getattr(usage, "completion_tokens", 0) or 0), cost)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def interpreter_from(model: str, api_base: str, timeout: int, retries: int,
                     api_key: str = "") -> LiteLLMInterpreter | None:
    """The configured interpreter, or None when no model is set (prose then comes from docstrings)."""
    if not model:
        return None
    return LiteLLMInterpreter(model, api_base=api_base, api_key=api_key, timeout=timeout, retries=retries)
