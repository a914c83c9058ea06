"""Inline completion comes first on the instance ``agent_models.json`` moves a next edit to.

The bundled next-edit agent runs on Embedded Instruct; an override moves it onto Embedded, the
one-slot loopback instance inline completion uses. A completion that starts while a next edit is
streaming there must cancel it at once, exactly as when the agent's TOML names that instance.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from lsprotocol import types

from tests.e2e.lsp.conftest import serve_from
from tests.e2e.lsp.test_next_edit import CHAT, _plain, inline_edit, ready, renamed_doc
from tests.support.replay_server import ReplayServer
from tests.support.streams import completion_reply, sse_reply


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_from(lsp_home, replay, monkeypatch)
    # A budget far longer than the test: only the completion can end the next edit.
    (lsp_home / "config/settings.toml").write_text(
        "[completion]\nwarm_idle_ms = 0\nprefetch_after_accept = false\n\n"
        "[next_edit]\ntime_budget_ms = 60000\n"
    )
    (lsp_home / "config/agent_models.json").write_text(
        '{"Embedded Next Edit": {"provider_instance": "Embedded"}}'
    )


async def test_a_completion_cancels_the_next_edit_on_the_overridden_instance(
    client, lsp_home, replay
) -> None:
    uri = await renamed_doc(client, lsp_home, wait=True)
    await ready(client)
    # The rewrite starts and then the model keeps generating (the stream stays open).
    started = {"choices": [{"index": 0, "delta": {"content": "<updated>\n"}}]}
    replay.script(CHAT, sse_reply(f"data: {json.dumps(started)}\n\n".encode(), hold_open=True))
    asked = asyncio.ensure_future(inline_edit(client, uri))
    [upstream] = await replay.wait_for_requests_async(1)
    assert upstream.path == CHAT

    replay.script("/v1/completions", completion_reply("2"))
    completion = client.text_document_inline_completion_async(
        types.InlineCompletionParams(
            context=types.InlineCompletionContext(types.InlineCompletionTriggerKind.Invoked),
            text_document=types.TextDocumentIdentifier(uri),
            position=types.Position(4, 15),
        )
    )
    answer = await asyncio.wait_for(completion, 20)
    assert [item.insert_text for item in answer.items] == ["2"]
    # The replay server answers both at once; a one-slot model server would have made the
    # completion wait for the next edit's stream, which only the completion's start ends.
    assert await upstream.wait_disconnected_async(within=5)
    assert await asyncio.wait_for(asked, 5) == []
    status = _plain(await client.protocol.send_request_async("qodeassist/status", {}))
    assert status["nextEdit"]["outcomes"] == {"superseded": 1}
