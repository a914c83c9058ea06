"""``serve --ws HOST:PORT``: the language server over a WebSocket (the ``ws`` extra)."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from tests.e2e.lsp.conftest import server_env


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_serve_ws_answers_initialize_over_a_websocket(lsp_home: Path) -> None:
    port = _free_port()
    server = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "qodeassist_lsp", "serve", "--ws", f"127.0.0.1:{port}"),
        env=server_env(lsp_home),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        for _ in range(200):
            try:
                _reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                if server.returncode is not None:
                    assert server.stderr is not None
                    pytest.fail(f"serve --ws exited: {(await server.stderr.read()).decode()}")
                await asyncio.sleep(0.05)
            else:
                writer.close()
                await writer.wait_closed()
                break
        async with connect(f"ws://127.0.0.1:{port}") as ws:
            params = {"processId": None, "rootUri": None, "capabilities": {}}
            request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
            await ws.send(json.dumps(request))
            while True:
                message = json.loads(await asyncio.wait_for(ws.recv(), 10))
                if message.get("id") == 1:
                    break
        assert message["result"]["serverInfo"]["name"] == "qodeassist-lsp"
    finally:
        if server.returncode is None:
            server.terminate()
        await server.wait()
