"""A client that resets its socket (closes it with our answer unread) ends the server cleanly."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path


def test_a_reset_socket_ends_the_server_with_a_log_line_not_a_crash(tmp_path: Path) -> None:
    ours, theirs = socket.socketpair()
    env = {
        **os.environ,
        "QODEASSIST_CONFIG_DIR": str(tmp_path / "config"),
        "QODEASSIST_DATA_DIR": str(tmp_path / "data"),
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "qodeassist_lsp"],
        stdin=theirs.fileno(),
        stdout=theirs.fileno(),
        stderr=subprocess.PIPE,
        env=env,
    )
    theirs.close()
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}},
        }
    ).encode()
    ours.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    assert ours.recv(16)  # the answer started: the rest stays unread, so closing resets
    ours.close()
    _, stderr = server.communicate(timeout=60)
    # LSP: exit code 1 for a session that ended without ``shutdown``; said, not a crash.
    assert server.returncode == 1, stderr.decode(errors="replace")[-2000:]
    assert b"the client closed the connection" in stderr
    assert b'File "<frozen runpy>"' not in stderr  # no traceback out of the server's main
