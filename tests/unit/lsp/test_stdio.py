"""stdio on the event loop's pipes: when it applies, the reader contract, and a real session."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from qodeassist_lsp.lsp.stdio import MessageReader, loop_factory, pipes_usable


def test_pipes_are_usable_files_and_a_shared_stderr_are_not(tmp_path: Path) -> None:
    read_fd, write_fd = os.pipe()
    with os.fdopen(read_fd, "rb") as stdin, os.fdopen(write_fd, "wb") as stdout:
        assert pipes_usable(stdin, stdout)
        assert not pipes_usable(stdin, stdout, stdout)  # stderr shares stdout's open file
        with (tmp_path / "input").open("wb+") as regular:
            assert not pipes_usable(regular, stdout)


class _Recorder:
    """Stands in for pygls's protocol: keeps what ``MessageReader`` decodes and dispatches."""

    def __init__(self) -> None:
        self.messages: list[Any] = []

    def structure_message(self, data: dict[str, Any]) -> Any:
        return data

    def handle_message(self, message: Any) -> None:
        if message.get("method") == "boom":
            raise ValueError("handler failed")
        self.messages.append(message)


def _reader(stop: threading.Event | None = None) -> tuple[MessageReader, _Recorder, list[str]]:
    recorder = _Recorder()
    errors: list[str] = []
    reader = MessageReader(
        recorder,  # type: ignore[arg-type]
        stop or threading.Event(),
        lambda exc, kind: errors.append(f"{kind.__name__}: {exc}"),
    )
    return reader, recorder, errors


async def test_messages_split_anywhere_or_batched_are_each_dispatched_once() -> None:
    reader, recorder, _ = _reader()
    second = json.dumps({"id": 2, "method": "b"}).encode()
    stream = (
        _frame({"jsonrpc": "2.0", "id": 1, "method": "a"})
        + b"content-length: %d\r\nContent-Type: application/vscode-jsonrpc; " % len(second)
        + b"charset=utf-8\r\n\r\n"
        + second
        + _frame({"jsonrpc": "2.0", "method": "c", "params": {"text": "é\r\n\r\n"}}, False)
    )
    for i in range(0, len(stream), 7):  # every boundary, including inside the header marker
        reader.data_received(stream[i : i + 7])
    assert [m.get("method") for m in recorder.messages] == ["a", "b", "c"]
    assert recorder.messages[2]["params"]["text"] == "é\r\n\r\n"
    reader.data_received(_frame({"id": 3, "method": "d"}) * 2)  # two in one read
    assert [m.get("method") for m in recorder.messages][3:] == ["d", "d"]
    assert not reader.closed.done()


async def test_bad_input_is_reported_and_the_next_message_still_arrives() -> None:
    reader, recorder, errors = _reader()
    reader.data_received(b"X-Nothing: 1\r\n\r\n")  # a header block without a length
    reader.data_received(b"Content-Length: 5\r\n\r\n{oops")  # not JSON
    reader.data_received(_frame({"method": "boom"}))  # the handler raises
    reader.data_received(_frame({"method": "fine"}))
    assert [m["method"] for m in recorder.messages] == ["fine"]
    assert len(errors) == 2 and all(e.startswith("JsonRpcException: ") for e in errors)


async def test_the_input_ending_or_a_stop_closes_the_reader() -> None:
    reader, recorder, _ = _reader()
    reader.data_received(b"Content-Length: 100\r\n\r\n{")
    assert reader.eof_received() is False
    assert reader.closed.done() and recorder.messages == []
    stop = threading.Event()
    stopped, recorder, _ = _reader(stop)
    stop.set()
    stopped.data_received(_frame({"method": "late"}))
    assert stopped.closed.done() and recorder.messages == []
    await asyncio.sleep(0)


def _frame(message: dict[str, object], ascii_only: bool = True) -> bytes:
    body = json.dumps(message, ensure_ascii=ascii_only).encode()  # the length counts bytes
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _spawn(tmp_path: Path, loop: str = "") -> subprocess.Popen[bytes]:
    """The server on pipes, its configuration under ``tmp_path``, on ``loop`` (default: ours)."""
    env = {
        **os.environ,
        "QODEASSIST_CONFIG_DIR": str(tmp_path / "config"),
        "QODEASSIST_DATA_DIR": str(tmp_path / "data"),
        "QODEASSIST_EVENT_LOOP": loop,
    }
    return subprocess.Popen(
        [sys.executable, "-m", "qodeassist_lsp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )


def _request(server: subprocess.Popen[bytes], msg_id: int, method: str, params: Any) -> Any:
    """Send a request and return its answer (notifications in between are skipped)."""
    assert server.stdin is not None and server.stdout is not None
    message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    server.stdin.write(_frame(message if params is None else {**message, "params": params}))
    server.stdin.flush()
    while True:
        head = server.stdout.readline()
        assert head.startswith(b"Content-Length: "), head
        length = int(head.split(b":")[1])
        while server.stdout.readline() not in (b"\r\n", b""):
            pass
        answer = json.loads(server.stdout.read(length))
        if answer.get("id") == msg_id:
            return answer


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
def test_a_session_over_pipes_answers_and_exits_at_once(tmp_path: Path, loop: str) -> None:
    with _spawn(tmp_path, loop) as server:
        assert server.stdin is not None
        initialize = {"processId": None, "rootUri": None, "capabilities": {}}
        answer = _request(server, 1, "initialize", initialize)
        assert "inlineCompletionProvider" in answer["result"]["capabilities"]
        server.stdin.write(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        # Exit right after start-up waits for the configuration load's thread: measure the
        # exit itself, once the configuration is in.
        for msg_id in range(2, 500):
            if _request(server, msg_id, "qodeassist/status", {})["result"]["state"] == "ready":
                break
            time.sleep(0.02)
        assert _request(server, 1000, "shutdown", None) == {
            "jsonrpc": "2.0",
            "id": 1000,
            "result": None,
        }
        exit_sent = time.monotonic()
        server.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
        server.stdin.flush()  # stdin stays open: the server must not wait for its end
        assert server.wait(timeout=10) == 0
        assert time.monotonic() - exit_sent < 1.0


def test_exit_without_shutdown_ends_the_process_with_code_1(tmp_path: Path) -> None:
    initialize = {"processId": None, "rootUri": None, "capabilities": {}}
    messages = _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize})
    messages += _frame({"jsonrpc": "2.0", "method": "exit"})
    with _spawn(tmp_path) as server:
        assert server.stdin is not None
        server.stdin.write(messages)
        server.stdin.flush()  # stdin stays open: the server must not wait for its end
        assert server.wait(timeout=10) == 1  # as the LSP specification asks


def test_the_event_loop_is_uvloops_unless_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    import uvloop

    monkeypatch.delenv("QODEASSIST_EVENT_LOOP", raising=False)
    assert loop_factory() is uvloop.new_event_loop
    monkeypatch.setenv("QODEASSIST_EVENT_LOOP", "asyncio")
    assert loop_factory() is None
