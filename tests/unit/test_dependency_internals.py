"""Canaries for the few private parts of dependencies kbc relies on: each fails loudly on the
release that moves it, before anything quietly breaks. The pins in pyproject.toml stop a
major release from being installed unseen."""

import asyncio


def test_libcst_codegen_hook_the_facts_walker_rides_on() -> None:
    import libcst as cst
    from libcst._nodes.internal import CodegenState

    assert callable(getattr(cst.Module, "_codegen", None))
    assert callable(CodegenState.before_codegen) and callable(CodegenState.after_codegen)


def test_chroma_client_cache_a_broken_local_store_is_forgotten_from() -> None:
    from chromadb.api.shared_system_client import SharedSystemClient

    assert isinstance(SharedSystemClient._identifier_to_system, dict)
    assert isinstance(SharedSystemClient._identifier_to_refcount, dict)
    assert hasattr(SharedSystemClient._refcount_lock, "__enter__")


def test_asyncio_policy_keeps_the_thread_loop_where_litellm_looks() -> None:
    local = getattr(asyncio.get_event_loop_policy(), "_local", None)
    assert local is not None and hasattr(local, "_loop")


def test_detect_secrets_settings_kbc_configures() -> None:
    from detect_secrets.settings import get_filters, get_settings

    settings = get_settings()
    assert callable(settings.disable_filters) and isinstance(settings.filters, dict)
    assert callable(get_filters.cache_clear)
