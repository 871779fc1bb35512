"""index: chunks at definitions and line windows, redaction, local embeddings (Chroma), lexical index."""
