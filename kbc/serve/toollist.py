"""The tool list as an agent pays for it every turn: each tool's name, description and
schemas, without what tells a model nothing.

The SDK publishes what pydantic makes of each tool's signature: a ``title`` for every
parameter and schema, an optional parameter as ``anyOf`` its type or null with a null
default, and the docstring's indentation. None of it changes what a model may send (an
optional parameter is one it may leave out; the server validates the arguments against the
full schema all the same), so the published list leaves it out.
"""

from __future__ import annotations

import inspect
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import Tool


def compact_schema(schema: Any) -> Any:
    """``schema`` without titles, an optional parameter's null alternative and null default."""
    if isinstance(schema, list):
        return [compact_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "default" and value is None or key == "additionalProperties" and value is True:
            continue  # what JSON Schema assumes without them
        out[key] = compact_schema(value) if key != "properties" else _properties(value)
    either = out.get("anyOf")
    if isinstance(either, list) and len(either) == 2 and {"type": "null"} in either:
        (kept,) = [part for part in either if part != {"type": "null"}]
        del out["anyOf"]
        out = {**kept, **out} if isinstance(kept, dict) else out
    return out


def _properties(properties: Any) -> Any:
    if not isinstance(properties, dict):
        return properties
    return {name: compact_schema(schema) for name, schema in properties.items()}


def compact_description(text: str | None) -> str | None:
    """A docstring as one reads it: dedented, its lines joined within each paragraph."""
    if not text:
        return text
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(" ".join(line.strip() for line in p.splitlines() if line.strip()) for p in paragraphs)


def compact_tool(tool: Tool) -> Tool:
    return tool.model_copy(
        update={
            "description": compact_description(tool.description),
            "input_schema": compact_schema(tool.input_schema),
            "output_schema": compact_schema(tool.output_schema) if tool.output_schema else None,
        }
    )


class CompactServer(MCPServer):
    """An MCP server whose tool list is published compact (:func:`compact_tool`)."""

    async def list_tools(self) -> list[Tool]:
        return [compact_tool(tool) for tool in await super().list_tools()]
