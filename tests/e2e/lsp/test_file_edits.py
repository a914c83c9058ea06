"""File edits from chat over stdio: a model calls ``edit_file``; the user applies, rejects, undoes.

The loopback provider replays a handwritten OpenAI-shaped tool-call stream (the model asks for
``edit_file`` with one SEARCH/REPLACE block), then a short answer. The test client plays the
editor: it answers ``workspace/applyEdit`` by applying the edit to its own copy of the buffer
and sending ``didChange``, as an editor does. Bytes are compared exactly (CRLF, non-ASCII).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types

from tests.e2e.lsp.conftest import serve_from, stop_server
from tests.e2e.lsp.test_chat import Events, request, start, start_plain
from tests.support.replay_server import ReplayServer, Reply
from tests.support.streams import chat_reply

AGENT = """schema_version = 1
name = "E2E Tool Chat"
extends = "Embedded Chat"
enable_tools = true
"""
OLD = "def greet(name):\r\n    return 'héllo ' + name\r\n"
NEW = "def greet(name):\r\n    return f'héllo {name}!'\r\n"
EDITS = "<<<<<<< SEARCH\n    return 'héllo ' + name\n=======\n    return f'héllo {name}!'\n>>>>>>> REPLACE\n"


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_from(lsp_home, replay, monkeypatch)
    (lsp_home / "config/agents/e2e_tool_chat.toml").write_text(AGENT)
    (lsp_home / "config/pipelines.toml").write_text(
        '[pipelines]\nchat_assistant = ["E2E Tool Chat"]\n'
    )
    (lsp_home / "project/greet.py").write_bytes(OLD.encode())
    # The edit itself is what the user reviews here; the permission prompt is tested elsewhere.
    settings = lsp_home / "config/settings.toml"
    before = settings.read_text() if settings.exists() else ""
    settings.write_text(before + '\n[tools.permissions]\nwrite = "allow"\n')


def tool_call_reply(call_id: str, name: str, arguments: dict[str, Any]) -> Reply:
    """An OpenAI chat stream in which the model calls ``name`` (arguments in two pieces)."""
    encoded = json.dumps(arguments)
    half = len(encoded) // 2
    call = {"index": 0, "id": call_id, "type": "function"}
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
            {**call, "function": {"name": name, "arguments": encoded[:half]}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": encoded[half:]}}]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]  # fmt: skip
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return Reply(body=body.encode(), content_type="text/event-stream")


class Editor:
    """The test client's open buffers; it applies ``workspace/applyEdit`` like an editor."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.buffers: dict[str, tuple[int, str]] = {}
        self.applied: list[types.ApplyWorkspaceEditParams] = []
        self.encoding = "utf-16"
        self.refuse = ""
        """When set, ``applyEdit`` is refused with this reason (a read-only buffer, say)."""
        """The position encoding the server chose (set by `begin`)."""

        @client.feature(types.WORKSPACE_APPLY_EDIT)
        def on_apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            self.applied.append(params)
            if self.refuse:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason=self.refuse)
            for change in params.edit.document_changes or []:
                assert isinstance(change, types.TextDocumentEdit)
                uri = change.text_document.uri
                version, text = self.buffers[uri]
                assert change.text_document.version == version
                encoding = self.encoding
                for edit in change.edits:
                    start = _offset(text, edit.range.start, encoding)
                    end = _offset(text, edit.range.end, encoding)
                    text = text[:start] + edit.new_text + text[end:]
                self.change(uri, text)
            return types.ApplyWorkspaceEditResult(applied=True)

    def open(self, path: Path) -> str:
        uri = path.as_uri()
        text = path.read_bytes().decode("utf-8")
        self.buffers[uri] = (1, text)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
            )
        )
        return uri

    def change(self, uri: str, text: str) -> None:
        version = self.buffers[uri][0] + 1
        self.buffers[uri] = (version, text)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=version, uri=uri),
                [types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )


async def begin(client: Any) -> tuple[Events, Editor]:
    """Start the session with an editor that applies edits; learn the position encoding."""
    editor = Editor(client)
    events = Events(client)
    result = await client.initialize_session(client.init_params)
    editor.encoding = str(result.capabilities.position_encoding or "utf-16")
    return events, editor


def _offset(text: str, position: types.Position, encoding: str) -> int:
    """The code-point offset of an LSP position in the negotiated ``encoding``."""
    lines = text.split("\n")
    start = sum(len(line) + 1 for line in lines[: position.line])
    units = index = 0
    line = lines[position.line] if position.line < len(lines) else ""
    while units < position.character and index < len(line):
        if "8" in encoding:
            units += len(line[index].encode("utf-8"))
        else:
            units += 2 if ord(line[index]) > 0xFFFF else 1
        index += 1
    return start + index


async def propose(client: Any, events: Events, replay: ReplayServer) -> tuple[str, dict[str, Any]]:
    """Let the model propose the edit; return the chat id and the pending ``fileEdit`` event."""
    replay.script(
        "/v1/chat/completions",
        [
            tool_call_reply("call_1", "edit_file", {"path": "greet.py", "edits": EDITS}),
            chat_reply("I proposed the change."),
        ],
    )
    sent = await request(client, "chat/send", {"message": "Make greet an f-string"})
    terminal = await events.terminal(sent["requestId"])
    assert terminal["kind"] == "finished", terminal
    streamed = events.of(sent["requestId"])
    kinds = [e["kind"] for e in streamed]

    assert kinds.index("toolCall") < kinds.index("fileEdit") < kinds.index("toolResult")
    call = next(e for e in streamed if e["kind"] == "toolCall")
    assert call["name"] == "edit_file" and call["permission"] == "write"
    result = next(e for e in streamed if e["kind"] == "toolResult")
    assert result["ok"] and result["summary"].startswith("Proposed: change greet.py")
    # The model was told: proposed, waiting for the user.
    told = replay.last.json["messages"][-1]
    assert told["role"] == "tool" and "waiting for the user" in told["content"]
    edit = next(e for e in streamed if e["kind"] == "fileEdit")
    assert edit["status"] == "pending" and edit["chatId"] == sent["chatId"]
    assert edit["parseCheck"] == "ok" and "parseReason" not in edit  # the whole file still parses
    assert "-    return 'héllo ' + name\r\n+    return f'héllo {name}!'\r\n" in edit["diff"]
    return sent["chatId"], edit


async def edit_file(client: Any, chat_id: str, edit_id: str, action: str) -> dict[str, Any]:
    return await request(
        client, "chat/editFile", {"chatId": chat_id, "editId": edit_id, "action": action}
    )


async def _status(events: Events, edit_id: str, status: str) -> dict[str, Any]:
    import asyncio

    for _ in range(200):
        found = [
            e
            for e in events.items
            if e["kind"] == "fileEdit" and e["editId"] == edit_id and e["status"] == status
        ]
        if found:
            return found[0]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no fileEdit {status} for {edit_id}: {events.items}")


async def test_an_accepted_edit_of_an_open_file_goes_through_apply_edit(client, lsp_home, replay):
    events, editor = await begin(client)
    target = lsp_home / "project/greet.py"
    uri = editor.open(target)
    chat_id, edit = await propose(client, events, replay)
    assert edit["uri"] == uri and editor.applied == []

    answer = await edit_file(client, chat_id, edit["editId"], "apply")
    assert answer == {"status": "applied", "message": "applied to greet.py"}
    assert editor.buffers[uri][1].encode() == NEW.encode()
    [applied] = editor.applied
    assert applied.label == "QodeAssist: file edit"
    assert target.read_bytes() == OLD.encode()  # the editor's buffer changed, not the disk
    await _status(events, edit["editId"], "applied")

    again = await edit_file(client, chat_id, edit["editId"], "apply")
    assert again["status"] == "applied" and "cannot apply" in again["message"]


async def test_a_rejected_edit_leaves_the_file_unchanged(client, lsp_home, replay):
    events = await start(client)
    target = lsp_home / "project/greet.py"
    chat_id, edit = await propose(client, events, replay)
    answer = await edit_file(client, chat_id, edit["editId"], "reject")
    assert answer["status"] == "rejected"
    await _status(events, edit["editId"], "rejected")
    assert target.read_bytes() == OLD.encode()
    assert await request(client, "checkpoints/list", {"chatId": chat_id}) == []


async def test_an_undone_edit_gives_the_old_bytes_back(client, lsp_home, replay):
    events = await start(client)
    target = lsp_home / "project/greet.py"
    chat_id, edit = await propose(client, events, replay)
    assert (await edit_file(client, chat_id, edit["editId"], "apply"))["status"] == "applied"
    assert target.read_bytes() == NEW.encode()  # not open in the editor: written on disk
    assert (await edit_file(client, chat_id, edit["editId"], "undo"))["status"] == "undone"
    assert target.read_bytes() == OLD.encode()
    await _status(events, edit["editId"], "undone")


async def test_bad_edit_file_params_are_invalid_params(client, lsp_home, replay):
    from pygls.exceptions import JsonRpcInvalidParams

    await start(client)
    with pytest.raises(JsonRpcInvalidParams, match="action"):
        await request(client, "chat/editFile", {"chatId": "c", "editId": "e", "action": "maybe"})
    with pytest.raises(JsonRpcInvalidParams, match="no edit 'nope'"):
        await request(client, "chat/editFile", {"chatId": "c", "editId": "nope", "action": "apply"})
    with pytest.raises(JsonRpcInvalidParams, match="no checkpoint"):
        await request(client, "checkpoints/restore", {"checkpointId": "cp-missing"})


async def test_a_checkpoint_is_restored_after_a_server_restart(client, lsp_home, replay):
    events = await start(client)
    target = lsp_home / "project/greet.py"
    chat_id, edit = await propose(client, events, replay)
    await edit_file(client, chat_id, edit["editId"], "apply")
    assert target.read_bytes() == NEW.encode()
    await stop_server(client)

    second = pytest_lsp.make_test_lsp_client()
    await second.start_io(sys.executable, "-m", "qodeassist_lsp")
    try:
        await start_plain(second, lsp_home)
        [checkpoint] = await request(second, "checkpoints/list", {"chatId": chat_id})
        assert checkpoint["chatId"] == chat_id and checkpoint["files"] == [target.as_uri()]
        assert await request(second, "checkpoints/list", {}) == [checkpoint]
        restored = await request(
            second, "checkpoints/restore", {"checkpointId": checkpoint["checkpointId"]}
        )
        assert restored == {"restored": [target.as_uri()]}
        assert target.read_bytes() == OLD.encode()
    finally:
        await stop_server(second)


async def test_a_block_that_matches_nowhere_is_a_tool_error_and_nothing_changes(
    client, lsp_home, replay
):
    events = await start(client)
    target = lsp_home / "project/greet.py"
    wrong = "<<<<<<< SEARCH\nprint('not in the file at all')\n=======\npass\n>>>>>>> REPLACE\n"
    replay.script(
        "/v1/chat/completions",
        [
            tool_call_reply("call_1", "edit_file", {"path": "greet.py", "edits": wrong}),
            chat_reply("Sorry."),
        ],
    )
    sent = await request(client, "chat/send", {"message": "Edit it"})
    assert (await events.terminal(sent["requestId"]))["kind"] == "finished"
    streamed = events.of(sent["requestId"])
    assert "fileEdit" not in [e["kind"] for e in streamed]
    result = next(e for e in streamed if e["kind"] == "toolResult")
    assert result["ok"] is False
    assert "edit block 1 of 1 matches nothing in greet.py" in result["content"]
    assert "closest lines are" in result["content"]
    assert target.read_bytes() == OLD.encode()


async def test_an_edit_the_editor_refuses_fails_and_changes_nothing(client, lsp_home, replay):
    events, editor = await begin(client)
    target = lsp_home / "project/greet.py"
    uri = editor.open(target)
    chat_id, edit = await propose(client, events, replay)
    editor.refuse = "the buffer is read-only"
    answer = await edit_file(client, chat_id, edit["editId"], "apply")
    assert answer["status"] == "failed" and "the buffer is read-only" in answer["message"]
    assert editor.buffers[uri][1] == OLD and target.read_bytes() == OLD.encode()
    await _status(events, edit["editId"], "failed")
    editor.refuse = ""  # the user makes the buffer writable and tries again
    assert (await edit_file(client, chat_id, edit["editId"], "apply"))["status"] == "applied"
    assert editor.buffers[uri][1] == NEW


async def test_the_permission_question_shows_the_edit_as_indented_diff_lines(
    client, lsp_home, replay
):
    # Issue 47: it was the arguments' JSON (escaped quotes, "\n"), whitespace collapsed.
    asked: list[types.ShowMessageRequestParams] = []

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def on_ask(params: types.ShowMessageRequestParams) -> types.MessageActionItem:
        asked.append(params)
        return types.MessageActionItem(title="Deny")

    events = await start(client)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"qodeassist": {"tools": {"permissions": {"write": "ask"}}}}
        )
    )
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="qodeassist.reloadConfiguration")
    )
    block = {
        "search": "def greet(name):\n    return 'héllo ' + name\n",
        "replace": 'def greet(name):\n    """Say hello."""\n    return f\'héllo {name}!\'\n',
    }
    replay.script(
        "/v1/chat/completions",
        [
            tool_call_reply("call_1", "edit_file", {"path": "greet.py", "edits": [block]}),
            chat_reply("Denied, fine."),
        ],
    )
    sent = await request(client, "chat/send", {"message": "Document greet"})
    assert (await events.terminal(sent["requestId"]))["kind"] == "finished"
    [question] = asked
    assert question.message.split("\n") == [
        "QodeAssist: the model wants to change files with the tool edit_file on greet.py. "
        "Allow it?",
        "-def greet(name):",
        "-    return 'héllo ' + name",
        "+def greet(name):",
        '+    """Say hello."""',
        "+    return f'héllo {name}!'",
    ]
    assert [a.title for a in question.actions or []] == [
        "Allow once",
        "Allow for this chat",
        "Deny",
    ]
    result = next(e for e in events.of(sent["requestId"]) if e["kind"] == "toolResult")
    assert not result["ok"] and "the user denied it" in result["content"]
    assert (lsp_home / "project/greet.py").read_bytes() == OLD.encode()
