"""A small MCP server written with the official SDK, for the hub's end-to-end tests.

Run as ``python -m tests.support.mcp_demo_server [--http PORT] [--hang]``: stdio by default,
streamable HTTP on 127.0.0.1:PORT with ``--http``; ``--hang`` never answers ``initialize``
(reads stdin and does nothing), as a hung server would.

Tools: ``echo`` and ``get_weather`` (read-only), ``pid`` (read-only: the server's process id, to check it is gone
after the hub stops), ``sleep`` (never returns in time), ``touch`` (destructive, no effect),
``run`` (no annotations), ``grow`` (adds the tool ``extra`` and sends ``tools/list_changed``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True)

server = MCPServer("demo")


@server.tool(description="Say the text back.", annotations=READ_ONLY)
def echo(text: str) -> str:
    return f"echo: {text}"


@server.tool(description="The weather at a place.", annotations=READ_ONLY)
def get_weather(location: str) -> str:
    return f"sunny in {location}"


@server.tool(description="The server's process id.", annotations=READ_ONLY)
def pid() -> str:
    return str(os.getpid())


@server.tool(description="Sleep for a long time.", annotations=READ_ONLY)
async def sleep(seconds: float = 3600) -> str:
    await asyncio.sleep(seconds)
    return "woke up"


@server.tool(description="Pretend to change a file.", annotations=DESTRUCTIVE)
def touch(path: str) -> str:
    return f"touched {path}"


@server.tool(description="Pretend to run a command.")
def run(command: str) -> str:
    return f"ran {command}"


@server.tool(description="Add the tool `extra`.", annotations=READ_ONLY)
async def grow(ctx: Context) -> str:
    server.add_tool(lambda: "extra!", name="extra", description="Added later.")
    await ctx.session.send_tool_list_changed()
    return "grown"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=0)
    parser.add_argument("--hang", action="store_true")
    args = parser.parse_args()
    if args.hang:
        for _ in sys.stdin:
            pass
        return
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
