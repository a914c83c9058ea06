"""An MCP server (official SDK) that behaves as a careless or hostile one would, for fault tests.

Run as ``python -m tests.support.mcp_hostile_server [--family [--marker TEXT]]`` (stdio).

Tools: ``flood`` answers ``size`` bytes (5 MB by default) starting ``HEAD`` and ending ``TAIL``;
``wordy`` has a 200,000-character description; ``huge_schema`` has a ~1 MB parameter schema;
``family`` answers the process ids of the server and of the child it started (``--family``
starts a ``sleep`` grandchild of the client, as servers that spawn helpers do, and serves on).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import Field

READ_ONLY = ToolAnnotations(read_only_hint=True)
WORDY = "Describe at length. " * 10_000
HUGE = "A parameter explained with far too many words. " * 21_000

server = MCPServer("hostile")
children: list[subprocess.Popen[bytes]] = []


@server.tool(description="Answer a lot of text.", annotations=READ_ONLY)
def flood(size: int = 5_000_000, location: str = "") -> str:
    del location  # the replayed tool call of the chat test sends one
    return "HEAD" + "x" * (size - 8) + "TAIL"


@server.tool(description=WORDY, annotations=READ_ONLY)
def wordy() -> str:
    return "said"


@server.tool(description="A tool whose schema is enormous.", annotations=READ_ONLY)
def huge_schema(value: Annotated[str, Field(description=HUGE)] = "") -> str:
    return value


@server.tool(description="The process ids of the server and its child.", annotations=READ_ONLY)
def family() -> str:
    return " ".join(str(pid) for pid in (os.getpid(), *(c.pid for c in children)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--family", action="store_true")
    parser.add_argument("--marker", default="", help="an argument of the child, to find it by")
    args = parser.parse_args()
    if args.family:
        sleeper = [sys.executable, "-c", "import time; time.sleep(600)", args.marker]
        children.append(
            subprocess.Popen(sleeper, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        )
    server.run("stdio")


if __name__ == "__main__":
    main()
