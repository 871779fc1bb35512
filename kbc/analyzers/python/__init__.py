"""The Python analyzer: one libcst parse and one walk per file."""
