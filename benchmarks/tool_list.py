"""What every agent turn pays for kbc's MCP tool list: the tokens (cl100k) of each tool as a
client receives it (name, description, input and output schemas, annotations, as JSON), for
the list as served and for the SDK's own rendering of the same tools, in the same run.

    python benchmarks/tool_list.py [--write]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio

BUDGET = 3_000  # the target


def counts(root: Path) -> tuple[dict[str, int], dict[str, int]]:
    from mcp.server.mcpserver import MCPServer

    from kbc.index.tokencount import default_counter
    from kbc.serve.mcp import create_server
    from kbc.services.components import Components
    from kbc.services.knowledge import KnowledgeBase

    server = create_server(KnowledgeBase(root, components=Components.lexical()))
    counter = default_counter()

    def tokens(tools: list) -> dict[str, int]:  # type: ignore[type-arg]
        return {
            t.name: counter.count(json.dumps(t.model_dump(mode="json", by_alias=True, exclude_none=True)))
            for t in tools
        }

    async def both() -> tuple[dict[str, int], dict[str, int]]:
        served = await server.list_tools()
        raw = await MCPServer.list_tools(server)  # what the SDK makes of the same tools
        return tokens(served), tokens(raw)

    return anyio.run(both)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help="write the section of RESULTS.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        subprocess.run(["git", "init", "-q", str(root)], check=True)  # tool lists need no build
        served, raw = counts(root)
    lines = ["| tool | served | SDK's rendering |", "| --- | ---: | ---: |"]
    lines += [f"| `{name}` | {served[name]} | {raw[name]} |" for name in served]
    lines.append(f"| **all {len(served)}** | **{sum(served.values()):,}** | **{sum(raw.values()):,}** |")
    text = (
        "Tokens (cl100k) of each tool as an MCP client receives it, as JSON: name, description, "
        "input and output schemas, annotations. Served: titles, an optional parameter's null "
        "alternative and null default, and docstring indentation left out "
        f"(`kbc/serve/toollist.py`), descriptions written short. Target ≤ {BUDGET:,}; peers 4.8k "
        "and 23.6k (issue 55); before both (7a5295e) the list took 4,711.\n\n" + "\n".join(lines)
    )
    print(text)
    if args.write:
        from results_file import update_section

        update_section(
            "tool-list",
            "MCP tool list (`benchmarks/tool_list.py`, 2026-12-07)",
            text,
            "python benchmarks/tool_list.py --write",
        )
    if sum(served.values()) > BUDGET:
        sys.exit(f"over the budget of {BUDGET} tokens")


if __name__ == "__main__":
    main()
