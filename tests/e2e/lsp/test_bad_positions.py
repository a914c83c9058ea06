"""Every request gets one answer: params that fail validation and positions past the end.

Over stdio against the real server: a request whose params pygls cannot structure is answered
with -32602 naming the field (it used to get only a ``window/showMessage``, and hang), and a
line past the end of the document is refused, never answered with an edit.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from tests.e2e.lsp.conftest import serve_from
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply, completion_reply

DOC = "def f(x):\n    return x\n"
ANSWER_WITHIN_S = 10
"""A request the server never answers fails the test after this long instead of hanging it."""


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_from(lsp_home, replay, monkeypatch)


async def open_doc(client: Any, home: Path) -> str:
    path = home / "project" / "f.py"
    path.write_text(DOC)
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, DOC))
    )
    return uri


async def refused(client: Any, method: str, params: dict[str, Any]) -> str:
    """Send ``params`` as they are (a JSON object) and return the -32602 error's message."""
    protocol = client.protocol
    typed = protocol.get_message_type
    # Send the dict as it is, not through the method's lsprotocol class (which would check it).
    protocol.get_message_type = lambda name: None if name == method else typed(name)
    try:
        with pytest.raises(JsonRpcInvalidParams) as raised:
            await asyncio.wait_for(protocol.send_request_async(method, params), ANSWER_WITHIN_S)
    finally:
        protocol.get_message_type = typed
    return str(raised.value)


def _range(start: tuple[int, int], end: tuple[int, int]) -> dict[str, Any]:
    return {
        "start": {"line": start[0], "character": start[1]},
        "end": {"line": end[0], "character": end[1]},
    }


async def test_params_that_fail_to_structure_are_answered_with_invalid_params(
    client, lsp_home
) -> None:
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    at = {"textDocument": {"uri": uri}}
    negative = await refused(
        client, types.TEXT_DOCUMENT_COMPLETION, {**at, "position": {"line": -1, "character": 0}}
    )
    assert "Position.line" in negative and "params.position" in negative
    huge = await refused(
        client, types.TEXT_DOCUMENT_COMPLETION, {**at, "position": {"line": 0, "character": 2**31}}
    )
    assert "Position.character" in huge
    action = {**at, "range": _range((-2, 0), (0, 0)), "context": {"diagnostics": []}}
    assert "params.range.start" in await refused(client, types.TEXT_DOCUMENT_CODE_ACTION, action)
    # Answered in the response, not out of band.
    assert not [m for m in client.messages if "Invalid Params" in m.message]
    # And the server keeps serving.
    assert await client.protocol.send_request_async("qodeassist/status", {})


async def test_completions_past_the_end_are_refused(client, lsp_home, replay) -> None:
    replay.script("/v1/completions", completion_reply("y = 1"))
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    inline = {
        "textDocument": {"uri": uri},
        "position": {"line": 1000, "character": 0},
        "context": {"triggerKind": 1},
    }
    message = await refused(client, types.TEXT_DOCUMENT_INLINE_COMPLETION, inline)
    assert "line 1000 is past the end" in message and "3 lines" in message
    fallback = {k: v for k, v in inline.items() if k != "context"}
    assert "line 1000" in await refused(client, types.TEXT_DOCUMENT_COMPLETION, fallback)
    assert replay.requests == []  # refused before any generation


async def test_refactors_past_the_end_are_refused_and_never_edit(client, lsp_home, replay):
    applied: list[types.ApplyWorkspaceEditParams] = []

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        applied.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    replay.script("/v1/chat/completions", chat_reply("    return 2 * x\n", repeat=3))
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    far = _range((500, 0), (600, 0))
    action = {
        "textDocument": {"uri": uri},
        "range": far,
        "context": {"diagnostics": [], "only": ["refactor.rewrite"]},
    }
    assert "line 500" in await refused(client, types.TEXT_DOCUMENT_CODE_ACTION, action)
    data = {"uri": uri, "range": far, "version": 1, "instructionId": "improve", "title": "T"}
    lazy = {"title": "T", "kind": "refactor.rewrite", "data": data}
    assert "line 500" in await refused(client, types.CODE_ACTION_RESOLVE, lazy)
    command = {"command": "qodeassist.refactor", "arguments": [data]}
    assert "line 500" in await refused(client, types.WORKSPACE_EXECUTE_COMMAND, command)
    # A selection that starts inside the document but ends past it is refused too.
    data = {**data, "range": _range((1, 0), (600, 0))}
    assert "line 600" in await refused(client, types.CODE_ACTION_RESOLVE, {**lazy, "data": data})
    assert applied == [] and replay.requests == []
