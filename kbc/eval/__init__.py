"""eval: measuring retrieval against known answers: golden files, history questions, the BM25
baseline, the metrics."""
