"""index: line-window chunks, secret redaction, local embeddings (Chroma) and a lexical index."""
