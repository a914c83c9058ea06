"""``serve --stdio --http`` on any stdin, and with its HTTP port already taken.

A stdin that is not a pipe (``/dev/null``, a file) is read by a thread: the event loop's pipe
transport refused ``/dev/null`` and the server hung. A port in use is one line on stderr while
the language server goes on serving; it used to surface only as the process ended (exit 1).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

from tests.e2e.http.conftest import free_port
from tests.e2e.http.test_beside_lsp import Lsp
from tests.support.workspace import Workspace

WITHIN_S = 60
"""Far longer than the server takes; the old code hung on ``/dev/null`` until this ran out."""

OFF = "the HTTP API is off"


def serve(workspace: Workspace, stdin: IO[Any]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "qodeassist_lsp", "serve", "--stdio",
         "--http", f"127.0.0.1:{free_port()}"],
        stdin=stdin, capture_output=True, cwd=workspace.project, timeout=WITHIN_S, check=False,
        env={**workspace.env, "QODEASSIST_HTTP_TOKEN": "input-token"},
    )  # fmt: skip


def framed(message: dict[str, Any]) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def messages(stdout: bytes) -> list[dict[str, Any]]:
    """The framed JSON-RPC messages of ``stdout``, in order (every byte must be one)."""
    found = []
    while stdout:
        header, separator, rest = stdout.partition(b"\r\n\r\n")
        assert separator and header.startswith(b"Content-Length:"), stdout[:200]
        fields = dict(line.split(b":", 1) for line in header.split(b"\r\n"))
        length = int(fields[b"Content-Length"])
        found.append(json.loads(rest[:length]))
        stdout = rest[length:]
    return found


def test_stdin_from_dev_null_ends_the_server(workspace: Workspace) -> None:
    with Path(os.devnull).open("rb") as devnull:
        done = serve(workspace, devnull)
    log = done.stderr.decode()
    assert done.returncode == 1, log  # the input ended without `shutdown`
    assert done.stdout == b""
    assert "Traceback" not in log, log


def test_a_file_of_requests_is_answered(workspace: Workspace, tmp_path: Path) -> None:
    requests = tmp_path / "requests.lsp"
    initialize = {"processId": None, "rootUri": workspace.project.as_uri(), "capabilities": {}}
    requests.write_bytes(framed({"id": 1, "method": "initialize", "params": initialize}))
    with requests.open("rb") as stdin:
        done = serve(workspace, stdin)
    log = done.stderr.decode()
    assert done.returncode == 1, log
    # The answer, and whatever the server sent before the input's end stopped it (a
    # notification of a start that was under way).
    [answer] = [m for m in messages(done.stdout) if m.get("id") == 1]
    assert "capabilities" in answer["result"], answer
    assert "Traceback" not in log, log


async def test_a_port_in_use_leaves_the_language_server_serving(workspace: Workspace) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "qodeassist_lsp", "serve", "--stdio",
            "--http", f"127.0.0.1:{port}",
            env={**workspace.env, "QODEASSIST_HTTP_TOKEN": "input-token"},
            cwd=workspace.project, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            async with asyncio.timeout(WITHIN_S):
                assert process.stderr is not None
                log = bytearray()
                while OFF.encode() not in log:  # said while serving, not as the process ends
                    line = await process.stderr.readline()
                    assert line, f"serve ended before saying the HTTP API is off: {log.decode()}"
                    log += line
                assert f"--http: could not serve on 127.0.0.1:{port}; {OFF}" in log.decode()
                editor = Lsp(process)
                initialize = {"processId": None, "rootUri": workspace.project.as_uri()}
                answer = await editor.request("initialize", {**initialize, "capabilities": {}})
                assert "capabilities" in answer
                await editor.send({"method": "initialized", "params": {}})
                await editor.request("shutdown", None)
                await editor.send({"method": "exit"})
                log += await process.stderr.read()
                code = await process.wait()
            text = log.decode()
            assert code == 0, text  # `shutdown` came first; the busy port is no failure
            assert "Traceback" not in text, text
            assert text.count(OFF) == 1, text
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
