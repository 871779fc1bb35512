"""store: where the passes' outputs live between runs (facts, graph, caches)."""
