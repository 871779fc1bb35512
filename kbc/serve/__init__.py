"""Serving: the MCP tools (:mod:`~kbc.serve.mcp`), the HTTP app with its REST API, UI pages and
push webhooks (:mod:`~kbc.serve.http`, ``api``, ``pages``, ``hooks``, ``security``, ``protocol``,
``markdown``), the Prometheus metrics (:mod:`~kbc.serve.metrics`) and the worker pool they share
(:mod:`~kbc.serve.worker`); :func:`kbc.serve.run.serve` picks the transport. stdio MCP loads
none of the HTTP modules."""
