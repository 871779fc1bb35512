"""Python source read as the interpreter reads it: standard library only, so the credential
sweep's workers can read a file exactly as the analyzer will without importing the parser."""

from __future__ import annotations

import io
import tokenize


def decode_source(data: bytes) -> tuple[str, tuple[str, ...]]:
    """Decode Python source as the interpreter would (PEP 263 cookie, BOM, UTF-8).

    Bytes that are not valid in the declared encoding are read as latin-1 so
    the file is still analyzed; the returned warning says so.
    """
    encoding = "utf-8"
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        # No usable cookie and not valid UTF-8: latin-1 maps every byte, so nothing is lost.
        return data.decode("latin-1"), (f"not valid {encoding} and no usable coding cookie; read as latin-1",)
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, ()
