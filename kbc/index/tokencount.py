"""Token counting with a real tokenizer that works offline.

tiktoken's cl100k_base needs its encoding file, which tiktoken would download.
litellm's wheel (a kbc dependency) ships that file; kbc copies it into its own
cache folder and points ``TIKTOKEN_CACHE_DIR`` there, so nothing is fetched.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from kbc.domain.errors import KbcError
from kbc.index.embed import cache_home

ENCODING = "cl100k_base"
# tiktoken names its cache files by the sha1 of the encoding's download address.
CACHE_FILES = {"cl100k_base": "9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
               "o200k_base": "fb374d419588a4632f3f557e76b4b70aebbca790"}


class TokenCounter(Protocol):
    name: str

    def count(self, text: str) -> int: ...


def _shipped_file(name: str) -> Path | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    candidate = Path(list(spec.submodule_search_locations)[0]) / "litellm_core_utils" / "tokenizers" / name
    return candidate if candidate.is_file() else None


class TiktokenCounter:
    def __init__(self, encoding: str = ENCODING) -> None:
        cache = cache_home() / "tiktoken"
        key = CACHE_FILES[encoding]
        if not (cache / key).is_file():
            source = _shipped_file(key)
            if source is None:
                raise KbcError(f"the {encoding} encoding file for token counting is missing",
                               hint="install kbc's dependencies (litellm ships the file)")
            cache.mkdir(parents=True, exist_ok=True)
            # A temporary name of this process's own: a build's workers may all start on a new
            # cache at once, and one's rename must not take another's half-written copy.
            handle, temporary = tempfile.mkstemp(prefix=f"{key}.", suffix=".tmp", dir=cache)
            os.close(handle)
            try:
                shutil.copyfile(source, temporary)
                os.replace(temporary, cache / key)
            finally:
                Path(temporary).unlink(missing_ok=True)
        os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
        import tiktoken

        self._encoding = tiktoken.get_encoding(encoding)
        self.name = encoding

    def count(self, text: str) -> int:
        return len(self._encoding.encode(text, disallowed_special=()))


@lru_cache(maxsize=2)
def default_counter(encoding: str = ENCODING) -> TokenCounter:
    return TiktokenCounter(encoding)
