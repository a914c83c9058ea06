"""``POST /mcp`` of ``serve --http``: the tool kit as an MCP server, driven by the SDK's client."""

from __future__ import annotations

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.e2e.http.conftest import HttpServer


async def test_the_sdk_client_lists_and_calls_the_tool_kit(http_server: HttpServer) -> None:
    url = f"{http_server.url}/mcp"
    headers = {"Authorization": f"Bearer {http_server.token}"}
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy", cache=None) as client,
    ):
        assert client.server_info is not None and client.server_info.name == "qodeassist-lsp"
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert {"read_file", "list_folder", "terminal"} <= tools
        assert not {"edit_file", "create_file", "delete_file"} & tools  # nobody would review them
        read = await client.call_tool("read_file", {"path": "notes.txt"})
        assert not read.is_error
        assert "inside the project" in read.content[0].text  # type: ignore[union-attr]
        # execute is "ask" by default, and an MCP client cannot be asked (as in `mcp serve`).
        run = await client.call_tool("terminal", {"command": "echo hi"})
        assert run.is_error
        assert "[mcp] server_allow" in run.content[0].text  # type: ignore[union-attr]


async def test_mcp_wants_the_token(http_server: HttpServer) -> None:
    async with httpx2.AsyncClient() as http:
        refused = await http.post(
            f"{http_server.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}
        )
    assert refused.status_code == 401
