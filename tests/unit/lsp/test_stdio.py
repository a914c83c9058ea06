"""serve_stdio beside a companion: a file is read to its end, and what is sent after ``exit``
closed stdout, while the companion still stops, is dropped instead of a cascade of errors."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from qodeassist_lsp.lsp.app import create_server
from qodeassist_lsp.lsp.stdio import serve_stdio


def framed(message: dict[str, Any]) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def answers(output: bytes) -> list[dict[str, Any]]:
    messages = []
    while output:
        header, _, rest = output.partition(b"\r\n\r\n")
        length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
        messages.append(json.loads(rest[:length]))
        output = rest[length:]
    return messages


def test_a_notification_after_exit_is_dropped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = create_server()
    requests = tmp_path / "requests.lsp"
    initialize = {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}
    requests.write_bytes(
        framed({"id": 1, "method": "initialize", "params": initialize})
        + framed({"method": "exit", "params": None})
    )
    stopping: list[str] = []

    async def companion() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:  # after `exit` closed stdout, as --http's stopping
            stopping.append("stopping")
            server.protocol.notify("qodeassist/status", {"state": "stopping"})
            raise

    output = tmp_path / "output.lsp"
    caplog.set_level(logging.INFO)
    with requests.open("rb") as stdin, output.open("wb") as stdout:
        serve_stdio(server, stdin, stdout, companion)
        assert stdout.closed  # by pygls's `exit`
    assert stopping == ["stopping"]
    assert [message.get("id") for message in answers(output.read_bytes())] == [1]
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, [r.getMessage() for r in errors]
