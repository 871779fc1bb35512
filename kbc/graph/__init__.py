"""graph: import and call graphs over the facts, with PageRank, cycles and module groups."""
