"""The MCP server: kbc's knowledge base as tools for coding agents."""
