"""The hub without servers: the MCP SDK is not even imported (its import costs ~0.9 s, ~30 MB)."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import asyncio, sys, tempfile
from pathlib import Path
from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT
from qodeassist_lsp.core.tools import ToolRegistry
from qodeassist_lsp.lsp import app
from qodeassist_lsp.mcp.approvals import ApprovalStore
from qodeassist_lsp.mcp.hub import HubConfig, McpHub

async def main():
    hub = McpHub(ApprovalStore(Path(tempfile.mkdtemp())))
    await hub.configure(HubConfig())
    hub.contribute(ToolRegistry(), CHAT_ASSISTANT)

asyncio.run(main())
print(sorted(m for m in sys.modules if m == "mcp" or m.startswith(("mcp.", "mcp_types"))))
"""


def test_a_server_without_mcp_servers_never_imports_the_sdk() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
