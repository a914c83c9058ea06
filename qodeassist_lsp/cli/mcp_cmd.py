"""``qodeassist-lsp mcp serve | list``: our tool kit as an MCP server; the hub's servers and state.

``mcp serve`` offers the tools every chat session gets (whatever the runtime's contributors
register for the CHAT pipeline) over stdio (default) or over streamable HTTP on
``127.0.0.1:<port>/mcp`` behind a bearer token. The permission policy of ``[tools]`` holds,
with ``ask`` refused unless ``[mcp] server_allow`` lists the class (`mcp.server_gate`). Tools
are confined to ``--workspace`` (default: ``--project``, else the current folder).
``mcp list`` connects to every configured server once and prints its state and tools.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from qodeassist_lsp.cli.common import EXIT_OK, CliError, load, print_json
from qodeassist_lsp.cli.tool_kit import connected_hub, workbench_for, workspace_of

if TYPE_CHECKING:
    from qodeassist_lsp.core.runtime import Runtime
    from qodeassist_lsp.core.tools import ToolContributor
    from qodeassist_lsp.workbench.bench import Workbench

SETTINGS_PORT = -1
"""``--port`` without a number: ``[mcp] server_port``."""


def register(commands: Any, shared: argparse.ArgumentParser) -> None:
    """Add the ``mcp`` command and its ``serve`` and ``list`` subcommands."""
    mcp = commands.add_parser("mcp", parents=[shared], help="MCP: serve the tool kit, list servers")
    actions = mcp.add_subparsers(dest="mcp_command", metavar="ACTION", required=True)
    serve = actions.add_parser(
        "serve", parents=[shared], help="offer the tool kit to MCP clients (stdio or 127.0.0.1)"
    )
    transport = serve.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="serve over stdin/stdout (default)")
    transport.add_argument(
        "--port",
        type=int,
        nargs="?",
        const=SETTINGS_PORT,
        metavar="N",
        help="serve streamable HTTP on 127.0.0.1:N/mcp with a bearer token "
        "(N defaults to [mcp] server_port)",
    )
    serve.add_argument(
        "--workspace",
        metavar="DIR",
        help="the folder tools may reach (default: --project, else the current folder)",
    )
    serve.set_defaults(handler=run_serve)
    listing = actions.add_parser(
        "list", parents=[shared], help="connect to every mcp.json server once and show its state"
    )
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.set_defaults(handler=run_list)


# --------------------------------------------------------------------------------- serve
def run_serve(args: argparse.Namespace, extra: Sequence[ToolContributor] = ()) -> int:
    """Serve until the client goes away (stdio) or the process is interrupted (HTTP).

    ``extra`` contributors register further tools (tests use it to add a tool of their own).
    """
    workspace = workspace_of(args)
    config = load(args)
    port = args.port
    if port == SETTINGS_PORT:
        port = config.settings.mcp.server_port
    if port is not None and not 1 <= port <= 65535:
        raise CliError(f"--port {port}: use a port between 1 and 65535")
    # Start-up cost: the MCP SDK (starlette, httpx2) is only needed here.
    from qodeassist_lsp.core.runtime import Runtime
    from qodeassist_lsp.core.tools import ToolRegistry
    from qodeassist_lsp.mcp import server as mcp_server
    from qodeassist_lsp.workbench.bench import offer_over_mcp

    runtime = Runtime(config)
    bench = workbench_for(runtime, workspace)
    registry = ToolRegistry()
    kit = [bench.kit().contribute, bench.features.contribute, *extra]
    offer_over_mcp(registry, runtime.contributors, lambda: config.settings, kit)
    server = mcp_server.build_server(registry)
    try:
        if port is None:
            asyncio.run(_serve(runtime, mcp_server.serve_stdio(server), bench))
        else:
            token, source = mcp_server.server_token(config.paths.data_root)
            sys.stderr.write(
                f"qodeassist-lsp MCP server: http://{mcp_server.LOOPBACK}:{port}/mcp "
                f"({len(registry)} tools, workspace {workspace})\n"
                f"bearer token ({source}): {token}\n"
            )
            sys.stderr.flush()
            asyncio.run(_serve(runtime, mcp_server.serve_http(server, port, token), bench))
    except KeyboardInterrupt:
        pass
    return EXIT_OK


async def _serve(runtime: Runtime, serving: Any, bench: Workbench) -> None:
    bench.features.start()  # the codebase index builds while the client connects
    try:
        await serving
    finally:
        try:
            await bench.features.aclose()
        finally:
            await runtime.aclose()


# --------------------------------------------------------------------------------- list
def run_list(args: argparse.Namespace) -> int:
    """Connect to every configured server, print its state and tools, disconnect."""
    servers = asyncio.run(_list(load(args)))
    if args.json:
        print_json(servers)
        return EXIT_OK
    if not servers["servers"]:
        sys.stdout.write("no MCP server configured (see docs/mcp.md)\n")
    for server in servers["servers"]:
        line = f"{server['name']}  {server['origin']}  {server['transport']}  {server['state']}"
        if server["state"] == "connected":
            line += f"  {len(server['toolNames'])} tools: {', '.join(server['toolNames'])}"
        elif server["error"]:
            line += f"  ({server['error']})"
        sys.stdout.write(line + "\n")
    return EXIT_OK


async def _list(config: Any) -> dict[str, Any]:

    async with connected_hub(config) as hub:
        status = hub.status()
        for server in status["servers"]:
            connection = hub.connection(server["name"])
            tools = connection.tools if connection is not None else ()
            server["toolNames"] = [tool.name for tool in tools]
        return status
