"""litellm, the one module that imports it: imported on the first call (it takes seconds), its
cost map read from the installed package rather than fetched, its telemetry and banners off,
the warnings its lazily loaded types raise as they load kept in here."""

from __future__ import annotations

import warnings
from typing import Any

from kbc.domain.settings import quiet_dependencies

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


def completion(model: str, messages: list[dict[str, str]], **options: Any) -> Any:
    """litellm's completion; its errors are litellm's own (the caller retries the transient)."""
    litellm = _import_litellm()
    _give_main_thread_a_loop()
    with warnings.catch_warnings():  # litellm's lazily loaded types warn as they load
        warnings.simplefilter("ignore")
        return litellm.completion(model=model, messages=messages, **options)


def cost(response: Any) -> float:
    """What a completion cost in USD; 0 when litellm does not know the model's price."""
    litellm = _import_litellm()
    try:
        return float(litellm.completion_cost(completion_response=response) or 0.0)
    except Exception:
        return 0.0


def embedding(model: str, texts: list[str], **options: Any) -> Any:
    """litellm's embedding response for ``texts``."""
    litellm = _import_litellm()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return litellm.embedding(model=model, input=texts, **options)
