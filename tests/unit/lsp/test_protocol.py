"""QodeProtocol in process: one document store, raw params for our methods, every request answered."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from qodeassist_lsp.context.documents import LineEdit
from qodeassist_lsp.lsp import methods
from qodeassist_lsp.lsp.app import create_server
from qodeassist_lsp.lsp.protocol import (
    INVALID_PARAMS,
    QodeProtocol,
    RawNotification,
    RawRequest,
    RefusedRequest,
)
from qodeassist_lsp.lsp.server import QodeAssistServer


class _Sink:
    """A writer that keeps what the server sends."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.sent.append(data)

    def close(self) -> None:
        pass


def _deliver(protocol: QodeProtocol, message: dict[str, Any]) -> None:
    """Decode and dispatch ``message`` as the stdio reader does."""
    payload = json.dumps({"jsonrpc": "2.0", **message})
    protocol.handle_message(protocol.structure_message(json.loads(payload)))


def _initialized(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[QodeAssistServer, QodeProtocol, _Sink]:
    """A server with its configuration under ``tmp_path``, initialized, writing to a sink."""
    monkeypatch.setenv("QODEASSIST_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("QODEASSIST_DATA_DIR", str(tmp_path / "data"))
    server = create_server()
    protocol = server.protocol
    assert isinstance(protocol, QodeProtocol)
    sink = _Sink()
    protocol.set_writer(sink)
    initialize = {"processId": None, "rootUri": None, "capabilities": {}}
    _deliver(protocol, {"id": 1, "method": "initialize", "params": initialize})
    return server, protocol, sink


def _change(uri: str, version: int, line: int, character: int, text: str) -> dict[str, Any]:
    at = {"line": line, "character": character}
    return {
        "method": "textDocument/didChange",
        "params": {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": at, "end": at}, "text": text}],
        },
    }


async def test_changes_reach_the_one_store_at_once_with_their_edits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, protocol, _ = _initialized(tmp_path, monkeypatch)
    uri = (tmp_path / "a.py").as_uri()
    document = {"uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}
    _deliver(protocol, {"method": "textDocument/didOpen", "params": {"textDocument": document}})
    seen: list[tuple[LineEdit, ...]] = []
    server.documents.add_listener(lambda event: seen.append(event.edits))
    for version in range(2, 52):
        _deliver(protocol, _change(uri, version, 0, 0, "#"))
    stored = server.documents.get(uri)  # applied in the notification's own call, no task
    assert stored is not None and stored.text == "#" * 50 + "x = 1\n" and stored.version == 51
    assert seen[-1] == (LineEdit(0, "#", 0),)  # from the range, not from comparing texts
    assert server.workspace.text_documents == {}  # pygls keeps no second copy
    _deliver(
        protocol, {"method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}}
    )
    assert server.documents.get(uri) is None
    if server.start_task is not None:
        server.start_task.cancel()


def _answers(sink: _Sink) -> dict[Any, dict[str, Any]]:
    """The responses the server wrote, by request id."""
    found = {}
    for data in sink.sent:
        message = json.loads(data.split(b"\r\n\r\n", 1)[1])
        if "id" in message and "method" not in message:
            found[message["id"]] = message
    return found


async def test_inline_completion_answers_bad_params_closed_documents_and_cancellation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, protocol, sink = _initialized(tmp_path, monkeypatch)
    method = "textDocument/inlineCompletion"
    uri = (tmp_path / "closed.py").as_uri()
    good = {
        "textDocument": {"uri": uri},
        "position": {"line": 0, "character": 0},
        "context": {"triggerKind": 1},
    }
    _deliver(protocol, {"id": "bad", "method": method, "params": {"position": {}}})
    negative = {**good, "position": {"line": -1, "character": 0}}
    _deliver(protocol, {"id": "negative", "method": method, "params": negative})
    _deliver(protocol, {"id": "closed", "method": method, "params": good})
    _deliver(protocol, {"id": "early", "method": method, "params": good})
    _deliver(protocol, {"method": "$/cancelRequest", "params": {"id": "early"}})
    for _ in range(200):  # the configuration loads first
        answers = _answers(sink)
        if {"bad", "negative", "closed", "early"} <= answers.keys():
            break
        await asyncio.sleep(0.01)
    assert answers["bad"]["error"]["code"] == -32602
    assert "params.text_document" in answers["bad"]["error"]["message"]
    assert answers["negative"]["error"]["code"] == -32602
    assert "params.position" in answers["negative"]["error"]["message"]
    assert answers["closed"]["result"] == {"items": []}  # not open: nothing to complete
    assert answers["early"]["error"]["code"] == -32800  # cancelled before it ran
    if server.start_task is not None:
        server.start_task.cancel()


async def test_methods_lsprotocol_does_not_define_keep_their_params_as_dicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, protocol, sink = _initialized(tmp_path, monkeypatch)
    params = {"chatId": "c1", "extra": [1, {"a": None}]}
    message = protocol.structure_message(
        {"jsonrpc": "2.0", "id": 7, "method": methods.CHAT_GET, "params": params}
    )
    assert isinstance(message, RawRequest)
    assert (message.id, message.method, message.params) == (7, methods.CHAT_GET, params)
    # qodeassist/status is a request and a notification: the id decides.
    request = protocol.structure_message({"jsonrpc": "2.0", "id": 1, "method": methods.STATUS})
    assert isinstance(request, RawRequest) and request.params is None
    notice = protocol.structure_message({"jsonrpc": "2.0", "method": methods.STATUS})
    assert isinstance(notice, RawNotification)
    protocol.notify(methods.STATUS, {"state": "x"})
    sent = json.loads(sink.sent[-1].split(b"\r\n\r\n", 1)[1])
    assert sent == {"jsonrpc": "2.0", "method": methods.STATUS, "params": {"state": "x"}}
    # A request of ours to the client goes out with its id (and a notification still has none).
    asked = protocol.send_request(methods.DIAGNOSTICS, {"uri": None}, msg_id="d1")
    sent = json.loads(sink.sent[-1].split(b"\r\n\r\n", 1)[1])
    assert sent == {
        "jsonrpc": "2.0",
        "id": "d1",
        "method": methods.DIAGNOSTICS,
        "params": {"uri": None},
    }
    _deliver(protocol, {"id": "d1", "result": {"items": []}})
    assert asked.result(timeout=1) is not None
    protocol.notify(methods.STATUS, None)
    assert "id" not in json.loads(sink.sent[-1].split(b"\r\n\r\n", 1)[1])
    # Params that are no object cannot be a dict: the request is answered -32602.
    malformed = protocol.structure_message(
        {"jsonrpc": "2.0", "id": 8, "method": methods.CHAT_GET, "params": [1]}
    )
    assert isinstance(malformed, RefusedRequest)
    assert malformed.id == 8 and malformed.method == INVALID_PARAMS
    assert malformed.params.code == -32602 and methods.CHAT_GET in str(malformed.params)
    # The internal method cannot be called from outside.
    _deliver(protocol, {"id": 9, "method": INVALID_PARAMS, "params": {}})
    assert json.loads(sink.sent[-1].split(b"\r\n\r\n", 1)[1])["error"]["code"] == -32601
    # A message that is no request cannot be answered: it is still pygls's reader's to report.
    with pytest.raises(JsonRpcException):
        protocol.structure_message(
            {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": [1]}
        )
    if server.start_task is not None:
        server.start_task.cancel()


async def test_requests_whose_params_fail_to_structure_are_answered_with_invalid_params(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, protocol, sink = _initialized(tmp_path, monkeypatch)
    uri = (tmp_path / "a.py").as_uri()
    at = {"textDocument": {"uri": uri}}
    bad = {
        "negative": ("textDocument/completion", {**at, "position": {"line": -1, "character": 0}}),
        "huge": ("textDocument/completion", {**at, "position": {"line": 0, "character": 2**31}}),
        "missing": ("textDocument/completion", at),
        "action": (
            "textDocument/codeAction",
            {
                **at,
                "range": {
                    "start": {"line": -3, "character": 0},
                    "end": {"line": 0, "character": 0},
                },
                "context": {"diagnostics": []},
            },
        ),
    }
    for ident, (method, params) in bad.items():
        _deliver(protocol, {"id": ident, "method": method, "params": params})
    answers = _answers(sink)
    for ident, (method, _params) in bad.items():
        error = answers[ident]["error"]
        assert error["code"] == -32602, ident
        assert error["message"].startswith(f"{method}: invalid params: "), error
    assert "Position.line" in answers["negative"]["error"]["message"]
    assert "but was -1" in answers["negative"]["error"]["message"]
    assert "params.position" in answers["negative"]["error"]["message"]
    assert "Position.character" in answers["huge"]["error"]["message"]
    assert "required field missing at params.position" in answers["missing"]["error"]["message"]
    assert "params.range.start" in answers["action"]["error"]["message"]
    # Answered, so no out-of-band "Error in server" message.
    assert not [data for data in sink.sent if b"window/showMessage" in data]
    if server.start_task is not None:
        server.start_task.cancel()
