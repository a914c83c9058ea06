"""stdio on the event loop's pipes: when it applies, the reader contract, and a real session."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from qodeassist_lsp.lsp.stdio import PipeReader, pipes_usable


def test_pipes_are_usable_files_and_a_shared_stderr_are_not(tmp_path: Path) -> None:
    read_fd, write_fd = os.pipe()
    with os.fdopen(read_fd, "rb") as stdin, os.fdopen(write_fd, "wb") as stdout:
        assert pipes_usable(stdin, stdout)
        assert not pipes_usable(stdin, stdout, stdout)  # stderr shares stdout's open file
        with (tmp_path / "input").open("wb+") as regular:
            assert not pipes_usable(regular, stdout)


async def test_the_reader_returns_lines_bodies_and_then_nothing() -> None:
    stream = asyncio.StreamReader()
    stream.feed_data(b"Content-Length: 2\r\n\r\n{}tail")
    stream.feed_eof()
    reader = PipeReader(stream)
    assert await reader.readline() == b"Content-Length: 2\r\n"
    assert await reader.readline() == b"\r\n"
    assert await reader.readexactly(2) == b"{}"
    assert await reader.readexactly(10) == b""  # cut short: the end
    assert await reader.readline() == b""


def _frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def test_a_session_over_pipes_answers_and_exits_at_once(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "QODEASSIST_CONFIG_DIR": str(tmp_path / "config"),
        "QODEASSIST_DATA_DIR": str(tmp_path / "data"),
    }
    with subprocess.Popen(
        [sys.executable, "-m", "qodeassist_lsp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    ) as server:
        assert server.stdin is not None and server.stdout is not None
        initialize = {"processId": None, "rootUri": None, "capabilities": {}}
        server.stdin.write(
            _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize})
        )
        server.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        server.stdin.flush()
        answers = []
        while len(answers) < 2:
            head = server.stdout.readline()
            assert head.startswith(b"Content-Length: "), head
            length = int(head.split(b":")[1])
            while server.stdout.readline() not in (b"\r\n", b""):
                pass
            message = json.loads(server.stdout.read(length))
            if "id" in message:
                answers.append(message)
        assert "inlineCompletionProvider" in answers[0]["result"]["capabilities"]
        assert answers[1] == {"jsonrpc": "2.0", "id": 2, "result": None}
        exit_sent = time.monotonic()
        server.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
        server.stdin.flush()  # stdin stays open: the server must not wait for its end
        assert server.wait(timeout=10) == 0
        assert time.monotonic() - exit_sent < 1.0
