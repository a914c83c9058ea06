"""The language server's MCP clients: nothing a stdio MCP server started outlives ``shutdown``."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from tests.e2e.lsp.conftest import server_env
from tests.support.waiting import until

REPO_ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def processes_with(marker: str) -> list[int]:
    """Live processes whose command line holds ``marker`` (zombies count as gone)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.fixture(autouse=True)
def marker(lsp_home: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A user mcp.json with a server that starts a child; its processes carry the marker."""
    marker = f"qa-mcp-family-{lsp_home.name}"
    server = {
        "command": sys.executable,
        "args": ["-m", "tests.support.mcp_hostile_server", "--family", "--marker", marker],
        "cwd": str(REPO_ROOT),
    }
    (lsp_home / "config/mcp.json").write_text(json.dumps({"mcpServers": {"hostile": server}}))
    for key, value in server_env(lsp_home).items():
        monkeypatch.setenv(key, value)
    return marker


async def test_shutdown_stops_the_helpers_a_stdio_server_started(
    client: LanguageClient, marker: str
) -> None:
    await client.initialize_session(client.init_params)
    for _ in range(400):
        status = await client.protocol.send_request_async("qodeassist/status", {})
        servers = status.mcp.servers if status.state == "ready" else []
        if servers and servers[0].state == "connected":
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError(f"the MCP server never connected: {status}")
    # The server and the server's own child (and the guard it runs under) carry the marker.
    assert len(processes_with(marker)) >= 2, processes_with(marker)

    await client.shutdown_session()

    await until(lambda: not processes_with(marker))
    assert processes_with(marker) == []
