"""The feature seam: every feature is set up from one list and the server calls its hooks."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.lsp import methods
from qodeassist_lsp.lsp.app import FEATURES, create_server
from qodeassist_lsp.lsp.feature import LanguageFeature


class _Sink:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        self.sent.append(json.loads(data.split(b"\r\n\r\n", 1)[1]))

    def close(self) -> None:
        pass


class _Demo(LanguageFeature):
    status_key = "demo"

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def initialized(self) -> None:
        self.calls.append("initialized")

    def reloaded(self, config: Configuration) -> None:
        self.calls.append("reloaded")

    def status(self) -> Any:
        return {"calls": len(self.calls)}

    async def aclose(self) -> None:
        self.calls.append("aclose")


def test_every_feature_registers_its_handlers_and_custom_methods() -> None:
    server = create_server()
    assert len(FEATURES) == 14
    assert {type(f).__name__ for f in server.features} == {
        "CompletionFeature",
        "NextEditFeature",
        "RefactorFeature",
        "ChatFeature",
        "McpFeature",
        "SkillFeature",
        "ToolKitFeature",
        "RulesFeature",
        "OperationsFeature",
        "FileWatch",
    }
    registered = server.protocol.fm.features
    for method in (
        methods.STATUS,
        methods.CHAT_SEND,
        methods.AGENTS_LIST,
        methods.CHAT_TOKENS,
        methods.SETTINGS_GET,
        methods.SETTINGS_UPDATE,
        methods.SKILLS_LIST,
        methods.CHAT_EDIT_FILE,
        methods.CHECKPOINTS_LIST,
        methods.CHECKPOINTS_RESTORE,
        methods.CHAT_PLAN_UPDATE,
        methods.CHAT_PLAN_APPROVE,
        methods.CHAT_PLAN_RESUME,
        methods.CHAT_PLAN_CANCEL,
        methods.INLINE_EDIT,
        methods.INLINE_EDIT_ALIAS,
        methods.DID_SHOW_INLINE_EDIT,
        methods.DID_FOCUS,
    ):
        assert method in registered
    assert "textDocument/inlineCompletion" in registered
    assert "qodeassist/codebase/search" in registered  # the feature table's operations
    assert methods.CMD_REFACTOR in server.protocol.fm.commands
    assert methods.CMD_DOCTOR in server.protocol.fm.commands
    assert methods.CMD_NEXT_EDIT_ACCEPTED in server.protocol.fm.commands


async def test_the_server_calls_a_plugged_in_features_hooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QODEASSIST_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("QODEASSIST_DATA_DIR", str(tmp_path / "data"))
    server = create_server()
    demo = _Demo()
    server.add_feature(demo)
    protocol = server.protocol
    sink = _Sink()
    protocol.set_writer(sink)

    def deliver(message: dict[str, Any]) -> None:
        protocol.handle_message(protocol.structure_message({"jsonrpc": "2.0", **message}))

    initialize = {"processId": None, "rootUri": None, "capabilities": {}}
    deliver({"id": 1, "method": "initialize", "params": initialize})
    deliver({"method": "initialized", "params": {}})
    for _ in range(300):
        if "initialized" in demo.calls:
            break
        await asyncio.sleep(0.01)
    assert demo.calls == ["reloaded", "initialized"]
    assert server.status()["demo"] == {"calls": 2}
    deliver({"id": 2, "method": "shutdown"})
    for _ in range(300):
        if any(m.get("id") == 2 for m in sink.sent):
            break
        await asyncio.sleep(0.01)
    assert demo.calls[-1] == "aclose" and server.shutdown_received


class _Broken(LanguageFeature):
    def __init__(self) -> None:
        self.calls: list[str] = []

    async def initialized(self) -> None:
        self.calls.append("initialized")
        raise RuntimeError("initialized broke")

    def reloaded(self, config: Configuration) -> None:
        self.calls.append("reloaded")
        raise RuntimeError("reloaded broke")

    async def aclose(self) -> None:
        self.calls.append("aclose")
        raise RuntimeError("aclose broke")


async def test_one_broken_feature_stops_neither_the_others_nor_the_shutdown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("QODEASSIST_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("QODEASSIST_DATA_DIR", str(tmp_path / "data"))
    server = create_server()
    broken, demo = _Broken(), _Demo()
    server.features.insert(0, broken)
    server.add_feature(demo)
    protocol = server.protocol
    sink = _Sink()
    protocol.set_writer(sink)

    def deliver(message: dict[str, Any]) -> None:
        protocol.handle_message(protocol.structure_message({"jsonrpc": "2.0", **message}))

    deliver({"id": 1, "method": "initialize", "params": {"capabilities": {}}})
    deliver({"method": "initialized", "params": {}})
    for _ in range(300):
        if "initialized" in demo.calls:
            break
        await asyncio.sleep(0.01)
    assert demo.calls == ["reloaded", "initialized"]
    deliver({"id": 2, "method": "shutdown"})
    for _ in range(300):
        if any(m.get("id") == 2 for m in sink.sent):
            break
        await asyncio.sleep(0.01)
    answer = next(m for m in sink.sent if m.get("id") == 2)
    assert "error" not in answer and demo.calls[-1] == "aclose"
    assert broken.calls == ["reloaded", "initialized", "aclose"]
    logged = caplog.text
    assert "_Broken.reloaded failed" in logged and "_Broken.aclose failed" in logged
