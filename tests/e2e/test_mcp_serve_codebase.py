"""``mcp serve`` offers ``search_codebase`` and ``find_definition`` over the workspace's index.

The real command over stdio, driven by the official SDK's client: the index of ``--workspace``
builds in the background once the server runs (a tool call waits for that build), the
defining module is found, and a ``.qodeassistignore``d file is never returned.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from mcp import Client

from tests.e2e.test_mcp_serve import Roots, stdio_server

MARKER = "zebraquux"


async def test_mcp_serve_searches_the_codebase(tmp_path: Path) -> None:
    roots = Roots(tmp_path / "config", tmp_path / "data", tmp_path / "ws", tmp_path / "secret")
    for folder in (roots.config, roots.data, roots.workspace):
        folder.mkdir()
    (roots.workspace / "settings_parser.py").write_text(
        "def parse_settings_file(path):\n    return open(path).read()\n"
    )
    (roots.workspace / "app.py").write_text("def run():\n    return parse_settings_file('a')\n")
    (roots.workspace / ".qodeassistignore").write_text("private.py\n")
    (roots.workspace / "private.py").write_text(f"def parse_settings_{MARKER}():\n    pass\n")
    server = stdio_server(roots, "-m", "qodeassist_lsp", "mcp", "serve", "--stdio")
    async with asyncio.timeout(60), Client(server, mode="legacy", cache=None) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert {"search_codebase", "find_definition"} <= set(tools)
        assert tools["search_codebase"].annotations is not None
        assert tools["search_codebase"].annotations.read_only_hint

        found = await client.call_tool("search_codebase", {"query": "parse settings file"})
        text = found.content[0].text  # type: ignore[union-attr]
        assert not found.is_error, text
        assert "settings_parser.py:1-2" in text, text
        assert MARKER not in text, text

        defined = await client.call_tool("find_definition", {"symbol": "parse_settings_file"})
        text = defined.content[0].text  # type: ignore[union-attr]
        assert "settings_parser.py:1-2" in text, text
