"""The agent's extension hooks: feature operations, and ACP's next-edit methods the SDK skips."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest
from acp import RequestError
from pydantic import BaseModel

from qodeassist_lsp.acp_agent.nes import NesServer
from qodeassist_lsp.acp_agent.operations import Extensions
from qodeassist_lsp.acp_agent.stdin_guard import UNSTABLE_METHODS, screen
from qodeassist_lsp.core.operations import Feature, FeatureSpec, Operation
from qodeassist_lsp.workbench.features import FeatureTable, services


class Text(BaseModel):
    text: str


async def _upper(request: Text) -> Text:
    return Text(text=request.text.upper())


def _table() -> FeatureTable:
    op = Operation(name="upper", request=Text, result=Text, run=_upper)
    return FeatureTable(
        [FeatureSpec(name="echo", build=lambda _s: Feature(operations=(op,)))],
        services(
            None,  # type: ignore[arg-type]
            lambda: [Path.cwd()],
            ignored_by=lambda _path: None,
            confinement=lambda: None,  # type: ignore[arg-type,return-value]
        ),
    )


class FakeNes:
    """Records what the next-edit routes call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        async def record(note: Any) -> None:
            self.calls.append((name, note))

        return record


def test_the_next_edit_methods_reach_the_sdk_as_extensions() -> None:
    assert {"nes/start", "nes/suggest", "document/didOpen", "document/didFocus"} <= UNSTABLE_METHODS
    request = b'{"jsonrpc": "2.0", "id": 7, "method": "nes/close", "params": {"sessionId": "s"}}'
    passed = json.loads(screen(request).line or b"")
    assert passed == {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "_nes/close",
        "params": {"sessionId": "s"},
    }
    prompt = b'{"jsonrpc": "2.0", "id": 8, "method": "session/prompt", "params": {}}'
    assert screen(prompt).line == prompt + b"\n"


async def test_extensions_route_next_edits_and_operations() -> None:
    nes = FakeNes()
    extensions = Extensions(_table, cast(NesServer, nes))

    await extensions.request("nes/close", {"sessionId": "s"})
    assert nes.calls == [("close", "s")]
    focus = {
        "sessionId": "s",
        "uri": "file:///a.py",
        "version": 1,
        "position": {"line": 0, "character": 0},
        "visibleRange": {
            "start": {"line": 0, "character": 0},
            "end": {"line": 1, "character": 0},
        },
    }
    await extensions.notify("document/didFocus", focus)
    assert nes.calls[-1][0] == "did_focus"
    await extensions.notify("somebody/else", {})  # an unknown notification is ignored

    assert await extensions.request("qodeassist/echo/upper", {"text": "ab"}) == {"text": "AB"}
    with pytest.raises(RequestError) as bad:
        await extensions.request("qodeassist/echo/upper", {"text": 1})
    assert bad.value.code == -32602
    with pytest.raises(RequestError) as unknown:
        await extensions.request("qodeassist/echo/lower", {"text": "ab"})
    assert unknown.value.code == -32601
    assert unknown.value.data == {
        "method": "_qodeassist/echo/lower",
        "message": "feature 'echo' has no operation 'lower' (operations: upper)",
    }
    with pytest.raises(RequestError) as other:
        await extensions.request("vendor/thing", {})
    assert other.value.code == -32601
