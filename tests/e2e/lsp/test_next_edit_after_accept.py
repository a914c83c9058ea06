"""A next-edit request right after an accepted inline completion, over stdio.

The editor accepts a ghost-text item (``didChange`` with its text, then its ``command``) and at
once asks ``textDocument/copilotInlineEdit``: the server answers without waiting for its own
edit-pause debounce, with the accepted text as the user's last edit in the prompt, and the
edit-pause prefetch that follows does not ask the model a second time.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from lsprotocol import types

from tests.e2e.lsp.conftest import serve_from
from tests.e2e.lsp.test_next_edit import _plain, ready, rewrite
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply, completion_reply

DOC = "def add(a, b):\n    return \n\nprint(add(1, 2))\n"
ACCEPTED = DOC.replace("return ", "return a + b")
NEXT = ACCEPTED.replace("def add(a, b)", "def add(a: int, b: int) -> int")
PAUSE_S = 2.0


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_from(lsp_home, replay, monkeypatch)
    (lsp_home / "config/settings.toml").write_text(
        "[completion]\nwarm_idle_ms = 0\n\n"
        f"[next_edit]\ntime_budget_ms = 4000\nedit_pause_ms = {int(PAUSE_S * 1000)}\n"
    )


async def test_a_next_edit_right_after_an_accepted_completion(client, lsp_home, replay) -> None:
    await client.initialize_session(client.init_params)
    path = lsp_home / "project" / "add.py"
    path.write_text(DOC)
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, DOC))
    )
    await ready(client)
    replay.script("/v1/completions", completion_reply("a + b"))
    answer = await client.text_document_inline_completion_async(
        types.InlineCompletionParams(
            context=types.InlineCompletionContext(types.InlineCompletionTriggerKind.Invoked),
            text_document=types.TextDocumentIdentifier(uri),
            position=types.Position(1, 11),
        )
    )
    [item] = answer.items
    assert item.insert_text == "a + b"

    replay.script("/v1/chat/completions", chat_reply(rewrite(NEXT)))
    started = time.monotonic()
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=2, uri=uri),
            [types.TextDocumentContentChangePartial(range=item.range, text=item.insert_text)],
        )
    )
    accepted, edits = await asyncio.gather(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(item.command.command, arguments=item.command.arguments)
        ),
        client.protocol.send_request_async(
            "textDocument/copilotInlineEdit",
            {"textDocument": {"uri": uri, "version": 2}, "position": {"line": 1, "character": 16}},
        ),
    )
    elapsed = time.monotonic() - started
    assert accepted is True
    [edit] = _plain(edits)["edits"]
    assert edit["textDocument"] == {"uri": uri, "version": 2}
    assert edit["range"]["start"]["line"] == 0 and edit["text"]
    # Not held back by the server's edit-pause debounce (the loopback model answers at once).
    assert elapsed < PAUSE_S * 0.75, elapsed
    chat = [r for r in replay.requests if r.path == "/v1/chat/completions"]
    assert "updated:\n    return a + b" in chat[0].json["messages"][-1]["content"]

    await asyncio.sleep(PAUSE_S + 0.3)  # the edit pause passed: its prefetch found the answer
    assert len([r for r in replay.requests if r.path == "/v1/chat/completions"]) == 1
    status = _plain(await client.protocol.send_request_async("qodeassist/status", {}))
    assert status["completion"]["accepted"] == 1
    assert status["nextEdit"]["outcomes"] == {"suggested": 1}
