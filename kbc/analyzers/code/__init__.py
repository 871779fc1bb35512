"""Facts of code in languages other than Python, read through tree-sitter grammars."""
