"""``qodeassist-lsp mcp serve`` driven by the official SDK's client, over stdio and --port.

tests/support/mcp_serve_with_tool.py runs the real command with a confined ``read_text`` tool and
a ``write_note`` (write class) tool added: a path outside the workspace is refused, ``ask`` is a
refusal unless ``[mcp] server_allow`` lists the class, and ``--port`` wants the bearer token.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

REPO_ROOT = Path(__file__).resolve().parents[2]
WITH_TOOL = ("-m", "tests.support.mcp_serve_with_tool")


@dataclass
class Roots:
    config: Path
    data: Path
    workspace: Path
    outside: Path

    def env(self, **extra: str) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(self.data),
            "QODEASSIST_CONFIG_DIR": str(self.config),
            "QODEASSIST_DATA_DIR": str(self.data),
            "QODEASSIST_CACHE_DIR": os.environ.get("QODEASSIST_CACHE_DIR", str(self.data)),
            "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
            **extra,
        }


@pytest.fixture
def roots(tmp_path: Path) -> Roots:
    found = Roots(tmp_path / "config", tmp_path / "data", tmp_path / "ws", tmp_path / "secret")
    for folder in (found.config, found.data, found.workspace):
        folder.mkdir()
    (found.workspace / "notes.txt").write_text("inside the workspace", encoding="utf-8")
    found.outside.write_text("outside", encoding="utf-8")
    return found


def stdio_server(roots: Roots, *command: str) -> StdioServerParameters:
    argv = command or (*WITH_TOOL, "mcp", "serve", "--stdio")
    return StdioServerParameters(
        command=sys.executable,
        args=[*argv, "--workspace", str(roots.workspace)],
        env=roots.env(),
        cwd=str(REPO_ROOT),
    )


async def test_the_sdk_client_lists_and_calls_our_tools_over_stdio(roots: Roots) -> None:
    async with Client(stdio_server(roots), mode="legacy", cache=None) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) >= {"read_text", "write_note"}
        read = tools["read_text"]
        assert read.annotations is not None and read.annotations.read_only_hint
        assert read.input_schema["required"] == ["path"]

        inside = await client.call_tool("read_text", {"path": "notes.txt"})
        assert not inside.is_error
        assert inside.content[0].text == "inside the workspace"  # type: ignore[union-attr]

        outside = await client.call_tool("read_text", {"path": str(roots.outside)})
        assert outside.is_error
        assert "is outside the workspace folders" in outside.content[0].text  # type: ignore[union-attr]
        escape = await client.call_tool("read_text", {"path": "../secret"})
        assert escape.is_error

        # write is "ask" by default, and nobody can be asked.
        write = await client.call_tool("write_note", {})
        assert write.is_error
        assert "[mcp] server_allow" in write.content[0].text  # type: ignore[union-attr]

        unknown = await client.call_tool("nope", {})
        assert unknown.is_error


async def test_server_allow_lets_mcp_clients_run_an_ask_class(roots: Roots) -> None:
    (roots.config / "settings.toml").write_text('[mcp]\nserver_allow = ["write"]\n', "utf-8")
    async with Client(stdio_server(roots), mode="legacy", cache=None) as client:
        write = await client.call_tool("write_note", {})
        assert not write.is_error
        assert write.content[0].text == "written"  # type: ignore[union-attr]


async def test_the_real_command_serves_over_stdio(roots: Roots) -> None:
    server = stdio_server(roots, "-m", "qodeassist_lsp", "mcp", "serve", "--stdio")
    async with Client(server, mode="legacy", cache=None) as client:
        assert client.server_info is not None and client.server_info.name == "qodeassist-lsp"
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        # The chat tool kit, each tool with its permission class as a hint.
        assert {"read_file", "list_folder", "search_text", "terminal"} <= set(tools)
        assert all(tool.annotations is not None for tool in tools.values())
        assert tools["read_file"].annotations.read_only_hint  # type: ignore[union-attr]

        inside = await client.call_tool("read_file", {"path": "notes.txt"})
        assert not inside.is_error
        assert "inside the workspace" in inside.content[0].text  # type: ignore[union-attr]
        outside = await client.call_tool("read_file", {"path": str(roots.outside)})
        assert outside.is_error
        assert "secret" in outside.content[0].text  # type: ignore[union-attr]
        # terminal is "execute", which [tools.permissions] asks about; nobody can be asked.
        run = await client.call_tool("terminal", {"command": "echo hi"})
        assert run.is_error
        assert "[mcp] server_allow" in run.content[0].text  # type: ignore[union-attr]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
async def http_server(roots: Roots) -> AsyncIterator[str]:
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *WITH_TOOL,
        "mcp",
        "serve",
        "--port",
        str(port),
        "--workspace",
        str(roots.workspace),
        cwd=REPO_ROOT,
        env=roots.env(QODEASSIST_MCP_TOKEN="test-token"),
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    banner = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
    assert f"http://127.0.0.1:{port}/mcp" in banner
    url = f"http://127.0.0.1:{port}/mcp"
    async with asyncio.timeout(30):
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                await asyncio.sleep(0.1)
    try:
        yield url
    finally:
        process.terminate()
        await process.wait()


async def test_port_requires_the_bearer_token(http_server: str) -> None:
    async with httpx2.AsyncClient() as http:
        refused = await http.post(http_server, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert refused.status_code == 401

    async with httpx2.AsyncClient(headers={"Authorization": "Bearer nope"}) as wrong:
        transport = streamable_http_client(http_server, http_client=wrong)
        with pytest.raises(BaseException):  # noqa: B017  (the SDK wraps the 401 in a group)
            async with Client(transport, mode="legacy", cache=None):
                pass

    async with (
        httpx2.AsyncClient(headers={"Authorization": "Bearer test-token"}) as good,
        Client(
            streamable_http_client(http_server, http_client=good), mode="legacy", cache=None
        ) as client,
    ):
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert "read_text" in names
        result = await client.call_tool("read_text", {"path": "notes.txt"})
        assert result.content[0].text == "inside the workspace"  # type: ignore[union-attr]
