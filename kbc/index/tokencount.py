"""Token counting with a real tokenizer that works offline.

tiktoken's cl100k_base would be downloaded. litellm's wheel (a kbc dependency)
ships its encoding file; kbc reads that file itself, checks it against the
encoding's published sha256, and builds the encoding with tiktoken's public
``Encoding`` constructor, so nothing is fetched, nothing is written to a cache
and no environment variable is set.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from kbc.domain.errors import KbcError

ENCODING = "cl100k_base"
# The encoding as OpenAI publishes it (tiktoken_ext.openai_public): the file litellm ships
# (named by the sha1 of its download address), its sha256, its split pattern, its specials.
SHIPPED_FILE = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


class TokenCounter(Protocol):
    name: str

    def count(self, text: str) -> int: ...


def _shipped_file(name: str) -> Path | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    candidate = Path(list(spec.submodule_search_locations)[0]) / "litellm_core_utils" / "tokenizers" / name
    return candidate if candidate.is_file() else None


def _ranks() -> dict[bytes, int]:
    """cl100k_base's merge ranks from the shipped file (lines of ``base64-token rank``)."""
    source = _shipped_file(SHIPPED_FILE)
    if source is None:
        raise KbcError(
            f"the {ENCODING} encoding file for token counting is missing",
            hint="install kbc's dependencies (litellm ships the file)",
        )
    data = source.read_bytes()
    if hashlib.sha256(data).hexdigest() != SHA256:
        raise KbcError(
            f"the {ENCODING} encoding file {source} is not the published one",
            hint="reinstall litellm (pip install --force-reinstall litellm)",
        )
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


SHORT_TEXT = 240  # characters: texts up to this long have their counts kept
SHORT_COUNTS_KEPT = 50_000


class TiktokenCounter:
    def __init__(self, encoding: str = ENCODING) -> None:
        if encoding != ENCODING:
            raise KbcError(f"unknown token encoding {encoding!r}", hint=f"use {ENCODING}")
        import tiktoken

        self._encoding = tiktoken.Encoding(
            name=ENCODING, pat_str=PATTERN, mergeable_ranks=_ranks(), special_tokens=SPECIAL
        )
        # The encoder keeps its own copy of the ranks; the Python dict of them (14 MB) only
        # serves to pickle the encoding, and a counter is pickled by its name instead.
        self._encoding._mergeable_ranks = {}
        self.name = encoding
        self._short: dict[str, int] = {}  # counts of short texts (a slice's titles and frames recur)

    def __reduce__(self) -> tuple[type[TiktokenCounter], tuple[str]]:
        return (TiktokenCounter, (self.name,))

    def count(self, text: str) -> int:
        if len(text) > SHORT_TEXT:
            return len(self._encoding.encode(text, disallowed_special=()))
        found = self._short.get(text)
        if found is None:
            found = len(self._encoding.encode(text, disallowed_special=()))
            if len(self._short) >= SHORT_COUNTS_KEPT:
                self._short.clear()
            self._short[text] = found
        return found


@lru_cache(maxsize=2)
def default_counter(encoding: str = ENCODING) -> TokenCounter:
    return TiktokenCounter(encoding)
