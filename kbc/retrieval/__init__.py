"""retrieval: hybrid ranking, graph boost, budgeted packing and deterministic rendering."""
