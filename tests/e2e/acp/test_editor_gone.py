"""``qodeassist-lsp acp`` ends when the process that started it exits, though its input never ends.

The language server's case (tests/e2e/lsp/test_editor_gone.py) for the ACP agent: a launcher
starts the agent on a socket the test still holds, answers ``initialize`` through it, and dies.
No end of input comes; only the parent watch can end the agent (ACP names no editor process).
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest

from tests.e2e.acp.conftest import agent_env
from tests.support.orphaned import DEADLINE_S, run_orphaned

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes and sockets")


def _initialize(ours: socket.socket) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    ours.sendall(json.dumps(request).encode() + b"\n")
    answer = b""
    ours.settimeout(DEADLINE_S)
    while b'"id":1' not in answer.replace(b" ", b""):
        chunk = ours.recv(65536)
        assert chunk, "the agent closed the connection before answering initialize"
        answer += chunk


def test_the_agent_exits_when_the_process_that_started_it_does(acp_home: Path) -> None:
    run = run_orphaned(["acp"], agent_env(acp_home), acp_home / "project", _initialize)
    expected = f"the parent process {run.launcher_pid} has exited; shutting down"
    assert expected in run.stderr, run.stderr[-3000:]
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
