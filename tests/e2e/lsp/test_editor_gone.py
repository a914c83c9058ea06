"""The server exits when the editor that started it is gone, though its input never ends.

A headless Neovim's server outlived its CI job by half an hour: its stdin, a socket, stayed
open in another process, so no end of input came. These tests hold the server's socket open
the same way and end only the editor.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.lsp.conftest import server_env
from tests.support.orphaned import DEADLINE_S, run_orphaned
from tests.support.replay_server import ReplayServer
from tests.support.streams import write_embedded_instances

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes and sockets")


def _frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _initialize(ours: socket.socket, home: Path, process_id: int | None) -> None:
    params = {"processId": process_id, "rootUri": (home / "project").as_uri(), "capabilities": {}}
    ours.sendall(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}))
    answer = b""
    while b'"id": 1' not in answer and b'"id":1' not in answer:
        chunk = ours.recv(65536)
        assert chunk, "the server closed the connection before answering initialize"
        answer += chunk
    ours.sendall(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))


def test_the_server_exits_when_the_editor_process_exits(
    lsp_home: Path, replay: ReplayServer
) -> None:
    write_embedded_instances(lsp_home / "config" / "providers", replay.url)
    editor = subprocess.Popen(["sleep", "60"])
    ours, theirs = socket.socketpair()
    server = subprocess.Popen(
        [sys.executable, "-m", "qodeassist_lsp"],
        stdin=theirs.fileno(),
        stdout=theirs.fileno(),
        stderr=subprocess.PIPE,
        env=server_env(lsp_home),
    )
    theirs.close()
    try:
        _initialize(ours, lsp_home, editor.pid)
        editor.kill()
        editor.wait()  # reaped, as the editor's own parent would
        # The socket stays open (we hold it): only the watch can end the server.
        _, stderr = server.communicate(timeout=DEADLINE_S)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        editor.kill()
        editor.wait()
        ours.close()
    text = stderr.decode(errors="replace")
    # LSP: exit code 1, as `exit` without `shutdown`; one line says why.
    assert server.returncode == 1, text[-3000:]
    assert f"the editor's process {editor.pid} has exited" in text, text[-3000:]
    assert "Traceback" not in text, text[-3000:]  # ended as at the end of input, no crash


def test_without_a_process_id_the_server_exits_when_its_parent_does(
    lsp_home: Path, replay: ReplayServer
) -> None:
    # A launcher (a shell, a wrapper script) starts the server and dies; the editor sent no pid.
    write_embedded_instances(lsp_home / "config" / "providers", replay.url)
    run = run_orphaned(
        [], server_env(lsp_home), lsp_home, lambda ours: _initialize(ours, lsp_home, None)
    )
    assert f"the parent process {run.launcher_pid} has exited" in run.stderr, run.stderr[-3000:]
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
