"""kbc over HTTP: the MCP transport, a versioned REST API, a browsable UI and metrics, one port."""
