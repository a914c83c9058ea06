"""QodeProtocol in process: didChange applied and handed over, nothing kept per notification."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from qodeassist_lsp.context.documents import LineEdit
from qodeassist_lsp.lsp.app import create_server
from qodeassist_lsp.lsp.protocol import QodeProtocol, RawRequest, UnstructurableRequest
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


async def test_changes_reach_the_store_with_their_edits_and_leave_no_futures_behind(
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
    await asyncio.sleep(0)
    stored = server.documents.get(uri)
    assert stored is not None and stored.text == "#" * 50 + "x = 1\n" and stored.version == 51
    assert seen[-1] == (LineEdit(0, "#", 0),)  # from the range, not from comparing texts
    # pygls would keep a finished future per didOpen/didChange for the whole session
    assert not [f for f in protocol._request_futures.values() if f.done()]
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


async def test_direct_requests_answer_bad_params_cancellation_and_failures_as_pygls_does(
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
    assert "textDocument" in answers["bad"]["error"]["message"]
    assert answers["negative"]["error"]["code"] == -32602
    assert "position.line" in answers["negative"]["error"]["message"]
    assert answers["closed"]["result"] == {"items": []}  # not open: nothing to complete
    assert answers["early"]["error"]["code"] == -32800  # cancelled before it ran
    assert not protocol._request_futures
    if server.start_task is not None:
        server.start_task.cancel()


async def test_direct_requests_are_decoded_without_cattrs_and_malformed_ones_are_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, protocol, _ = _initialized(tmp_path, monkeypatch)
    method = "textDocument/inlineCompletion"
    params = {"textDocument": {"uri": "file:///a.py"}}
    message = protocol.structure_message(
        {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    )
    assert isinstance(message, RawRequest)
    assert (message.id, message.method, message.params) == (7, method, params)
    # Anything the fast path does not vouch for goes through pygls's checks, and is answered.
    malformed = protocol.structure_message(
        {"jsonrpc": "2.0", "id": 8, "method": method, "params": [1]}
    )
    assert isinstance(malformed, UnstructurableRequest)
    assert malformed.id == 8 and malformed.error.code == -32602
    # A message that is no request cannot be answered: it is still pygls's reader's to report.
    with pytest.raises(JsonRpcException):
        protocol.structure_message({"jsonrpc": "2.0", "method": method, "params": [1]})
    boolean = protocol.structure_message(
        {"jsonrpc": "2.0", "id": True, "method": method, "params": params}
    )
    assert boolean.id is True  # what cattrs makes of it (int | str accepts a bool)
    if server.start_task is not None:
        server.start_task.cancel()


async def test_requests_whose_params_fail_to_structure_are_answered_with_invalid_params(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, protocol, sink = _initialized(tmp_path, monkeypatch)
    reported: list[Exception] = []
    monkeypatch.setattr(server, "report_server_error", lambda error, source: reported.append(error))
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
    assert reported == []  # answered, so no out-of-band "Error in server" message
    if server.start_task is not None:
        server.start_task.cancel()
