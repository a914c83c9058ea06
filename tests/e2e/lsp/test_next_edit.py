"""Next-edit suggestions over stdio, through both methods, with recorded rewrite answers."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.lsp.conftest import serve_from
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply

DOC = "def area(w, h):\n    return w * h\n\n\nprint(area(2, 3))\nprint(area(4, 5))\n"
RENAMED = DOC.replace("def area", "def surface")
SUGGESTED = RENAMED.replace("print(area", "print(surface")
CHAT = "/v1/chat/completions"


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_from(lsp_home, replay, monkeypatch)
    # Only explicit requests go upstream (the edit-pause prefetch has its own test).
    (lsp_home / "config/settings.toml").write_text(
        "[completion]\nwarm_idle_ms = 0\n\n[next_edit]\ntime_budget_ms = 4000\n"
    )


def _plain(value: Any) -> Any:
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


async def ready(client) -> None:
    """Wait until the server has loaded its configuration."""
    for _ in range(100):
        status = await client.protocol.send_request_async("qodeassist/status", {})
        if status.state == "ready":
            return
        await asyncio.sleep(0.05)


async def renamed_doc(client, home: Path, *, wait: bool = False) -> str:
    """Open the file, then rename ``area`` in its definition (version 2)."""
    await client.initialize_session(client.init_params)
    path = home / "project" / "geo.py"
    path.write_text(DOC)
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, DOC))
    )
    if wait:
        await ready(client)
    change(client, uri, 2, types.Range(types.Position(0, 4), types.Position(0, 8)), "surface")
    return uri


def change(client, uri: str, version: int, where: types.Range, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=version, uri=uri),
            [types.TextDocumentContentChangePartial(range=where, text=text)],
        )
    )


async def inline_edit(
    client,
    uri: str,
    version: int = 2,
    line: int = 0,
    method: str = "textDocument/copilotInlineEdit",
) -> list[dict[str, Any]]:
    params = {
        "textDocument": {"uri": uri, "version": version},
        "position": {"line": line, "character": 11},
        "context": {"triggerKind": 2},
    }
    result = _plain(await client.protocol.send_request_async(method, params))
    return list(result["edits"])


def rewrite(text: str) -> str:
    return f"<updated>\n{text.rstrip(chr(10))}\n</updated>"


@pytest.mark.parametrize("method", ["textDocument/copilotInlineEdit", "qodeassist/inlineEdit"])
async def test_the_right_edit_at_the_right_range(client, lsp_home, replay, method) -> None:
    uri = await renamed_doc(client, lsp_home)
    replay.script(CHAT, chat_reply(rewrite(SUGGESTED)[:40], rewrite(SUGGESTED)[40:]))
    [edit] = await inline_edit(client, uri, method=method)
    assert edit["textDocument"] == {"uri": uri, "version": 2}
    assert edit["range"] == {
        "start": {"line": 4, "character": 6},
        "end": {"line": 5, "character": 10},
    }
    assert edit["text"] == "surface(2, 3))\nprint(surface"
    assert edit["command"]["command"] == "qodeassist.nextEditAccepted"
    sent = replay.last.json["messages"]
    assert "You predict the next edit" in sent[0]["content"]
    prompt = sent[-1]["content"]
    assert "original:\ndef area(w, h):\nupdated:\ndef surface(w, h):" in prompt
    assert "def surface<|cursor|>(w, h):" in prompt

    client.protocol.notify("textDocument/didShowInlineEdit", {"item": edit})
    accepted = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command=edit["command"]["command"], arguments=edit["command"]["arguments"]
        )
    )
    assert accepted is True
    status = _plain(await client.protocol.send_request_async("qodeassist/status", {}))
    assert status["nextEdit"]["shown"] == 1 and status["nextEdit"]["accepted"] == 1


async def test_a_focused_file_is_a_recently_viewed_snippet(client, lsp_home, replay) -> None:
    uri = await renamed_doc(client, lsp_home)
    helper = lsp_home / "project" / "shapes.py"
    helper.write_text("from geo import area\n\nSQUARE = area(1, 1)\n")
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(helper.as_uri(), "python", 1, helper.read_text())
        )
    )
    client.protocol.notify("textDocument/didFocus", {"textDocument": {"uri": helper.as_uri()}})
    replay.script(CHAT, chat_reply(rewrite(SUGGESTED)))
    assert len(await inline_edit(client, uri)) == 1
    prompt = replay.last.json["messages"][-1]["content"]
    assert '<snippet path="shapes.py">\nfrom geo import area\n\nSQUARE = area(1, 1)' in prompt
    status = _plain(await client.protocol.send_request_async("qodeassist/status", {}))
    assert status["nextEdit"]["pipeline"] == ["Embedded Next Edit"]


async def test_ignored_files_are_never_sent(client, lsp_home, replay) -> None:
    (lsp_home / "project" / ".qodeassistignore").write_text("secret*.py\n")
    uri = await renamed_doc(client, lsp_home)
    secret = lsp_home / "project" / "secret.py"
    secret.write_text("TOKEN = 'hunter2'\n")
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(secret.as_uri(), "python", 1, secret.read_text())
        )
    )
    change(client, secret.as_uri(), 2, types.Range(types.Position(0, 0), types.Position(0, 0)), "#")
    assert await inline_edit(client, secret.as_uri()) == []
    assert replay.requests == []
    replay.script(CHAT, chat_reply(rewrite(SUGGESTED)))
    assert len(await inline_edit(client, uri)) == 1
    assert "hunter2" not in replay.last.json["messages"][-1]["content"]


async def test_an_edit_for_an_old_version_is_dropped(client, lsp_home, replay) -> None:
    uri = await renamed_doc(client, lsp_home)
    assert await inline_edit(client, uri, version=1) == []  # the editor is behind: no work
    assert replay.requests == []
    replay.script(CHAT, chat_reply(rewrite(SUGGESTED), first_byte_delay=0.6))
    asked = asyncio.ensure_future(inline_edit(client, uri))
    [upstream] = await asyncio.to_thread(replay.wait_for_requests, 1)
    change(client, uri, 3, types.Range(types.Position(1, 16), types.Position(1, 16)), " * 1")
    assert await asked == []
    assert await upstream.wait_disconnected_async(within=2)


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (rewrite(RENAMED), "unchanged"),
        (rewrite(DOC), "undoes the rename"),
        ("I would rename the calls.", "malformed"),
    ],
)
async def test_no_suggestion_for_a_no_op_an_undo_or_nonsense(
    client, lsp_home, replay, answer, why
) -> None:
    uri = await renamed_doc(client, lsp_home)
    replay.script(CHAT, chat_reply(answer))
    assert await inline_edit(client, uri) == [], why
    status = _plain(await client.protocol.send_request_async("qodeassist/status", {}))
    outcome = {"unchanged": "no_change", "undoes the rename": "undo", "malformed": "malformed"}
    assert status["nextEdit"]["outcomes"] == {outcome[why]: 1}


async def test_a_late_model_gets_an_empty_answer_within_the_budget(
    client, lsp_home, replay
) -> None:
    settings = "[next_edit]\ntime_budget_ms = 1000\n"
    (lsp_home / "config/settings.toml").write_text(settings)
    uri = await renamed_doc(client, lsp_home)
    replay.script(CHAT, chat_reply(rewrite(SUGGESTED), first_byte_delay=5))
    await ready(client)
    started = time.monotonic()
    assert await inline_edit(client, uri) == []
    # The budget, plus the first request's one-time costs (imports, the HTTP client).
    assert time.monotonic() - started < 1.8
    [upstream] = await asyncio.to_thread(replay.wait_for_requests, 1)
    assert await upstream.wait_disconnected_async(within=2)


async def test_an_edit_pause_prepares_the_next_edit(client, lsp_home, replay) -> None:
    (lsp_home / "config/settings.toml").write_text("[next_edit]\nedit_pause_ms = 100\n")
    replay.script(CHAT, chat_reply(rewrite(SUGGESTED)))
    uri = await renamed_doc(client, lsp_home, wait=True)
    [upstream] = await asyncio.to_thread(replay.wait_for_requests, 1)
    assert upstream.wait_finished(5)
    started = time.monotonic()
    [edit] = await inline_edit(client, uri)  # the request finds the prepared answer
    assert time.monotonic() - started < 0.5
    assert edit["text"] == "surface(2, 3))\nprint(surface"
    assert len(replay.requests) == 1
