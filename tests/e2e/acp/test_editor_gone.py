"""``qodeassist-lsp acp`` ends when the process that started it exits, though its input never ends.

The language server's case (tests/e2e/lsp/test_editor_gone.py) for the ACP agent: a launcher
starts the agent on a socket the test still holds, answers ``initialize`` through it, and dies.
No end of input comes; only the parent watch can end the agent (ACP names no editor process).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import pytest

from tests.e2e.acp.conftest import agent_env

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes and sockets")

DEADLINE_S = 20.0
"""The watch probes every 2 s; the rest is slack for a loaded machine."""

_LAUNCHER = """
import subprocess, sys, time
agent = subprocess.Popen([sys.executable, "-m", "qodeassist_lsp", "acp"])
open(sys.argv[1], "w").write(str(agent.pid))
time.sleep(60)
"""


def _read_to_end(stream: IO[bytes]) -> bytes:
    """Read ``stream`` until every writer closed it; fail after `DEADLINE_S`."""
    deadline = time.monotonic() + DEADLINE_S
    data = b""
    while True:
        ready, _, _ = select.select([stream], [], [], max(deadline - time.monotonic(), 0))
        if not ready:
            raise AssertionError(f"still open after {DEADLINE_S:g} s: {data[-3000:]!r}")
        chunk = os.read(stream.fileno(), 65536)
        if not chunk:
            return data
        data += chunk


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
    pid_file = acp_home / "agent.pid"
    ours, theirs = socket.socketpair()
    launcher = subprocess.Popen(
        [sys.executable, "-c", _LAUNCHER, str(pid_file)],
        stdin=theirs.fileno(),
        stdout=theirs.fileno(),
        stderr=subprocess.PIPE,  # the agent's too: it ends when the agent has exited
        env=agent_env(acp_home),
        cwd=acp_home / "project",
    )
    theirs.close()
    try:
        _initialize(ours)
        launcher.kill()
        launcher.wait()
        assert launcher.stderr is not None
        stderr = _read_to_end(launcher.stderr)  # its end: the agent has exited
    finally:
        agent_pid = int(pid_file.read_text()) if pid_file.exists() else None
        if agent_pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(agent_pid, signal.SIGKILL)
        launcher.kill()
        launcher.wait()
        if launcher.stderr is not None:
            launcher.stderr.close()
        ours.close()
    text = stderr.decode(errors="replace")
    assert f"the parent process {launcher.pid} has exited; shutting down" in text, text[-3000:]
    assert "Traceback" not in text, text[-3000:]
