"""analyzers: discover and per-file static analysis (libcst), results as values."""
