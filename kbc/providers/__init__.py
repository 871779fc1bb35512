"""Models behind an API, reached through litellm: chat completions (the views' prose, answers,
reranking) and embeddings. Below both the index and the views, which know nothing of each other."""
