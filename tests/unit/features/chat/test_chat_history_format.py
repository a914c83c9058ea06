"""History files: v0.3 round trips, tolerant reading, and the import of v0.1/v0.2 chats."""

from __future__ import annotations

import json

import pytest

from qodeassist_lsp.core.content import (
    FileEditBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    StoredAttachmentBlock,
    StoredImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from qodeassist_lsp.features.chat.history_format import (
    ChatFile,
    HistoryFormatError,
    decode,
    encode,
)


def test_every_block_round_trips_through_v0_3() -> None:
    chat = ChatFile(
        messages=[
            Message(
                "user",
                (
                    TextBlock("hi"),
                    StoredImageBlock("a.png", "a_1234abcd.png", "image/png"),
                    StoredAttachmentBlock("n.md", "n_1234abcd.md"),
                    ImageBlock("aGk=", "image/jpeg"),
                ),
            ),
            Message(
                "assistant",
                (
                    ThinkingBlock("hmm", "sig"),
                    RedactedThinkingBlock("opaque"),
                    TextBlock("answer"),
                    ToolUseBlock("t1", "read_file", {"file_path": "x"}),
                ),
                "req1",
            ),
            Message("user", (ToolResultBlock("t1", "read_file", "content", True),)),
        ],
        title="hi",
        agent="Embedded Chat",
        linked_files=["/p/x.py"],
        usage={"req1": {"prompt": 10, "completion": 2, "cached": 0, "reasoning": 0}},
    )
    text = encode(chat)
    data = json.loads(text)
    assert data["version"] == "0.3"
    assert data["messages"][0]["blocks"][1] == {
        "type": "stored_image",
        "fileName": "a.png",
        "storedPath": "a_1234abcd.png",
        "mediaType": "image/png",
    }
    assert data["messages"][2]["blocks"][0]["toolUseId"] == "t1"
    decoded, warnings = decode(text)
    assert warnings == []
    assert decoded == chat


def test_file_edits_load_archived() -> None:
    data = {
        "version": "0.3",
        "messages": [
            {
                "role": "assistant",
                "blocks": [
                    {
                        "type": "file_edit",
                        "editId": "e1",
                        "filePath": "/p/a.py",
                        "oldContent": "a",
                        "newContent": "b",
                        "status": "pending",
                    }
                ],
            }
        ],
    }
    chat, _ = decode(json.dumps(data))
    [block] = chat.messages[0].blocks
    assert isinstance(block, FileEditBlock) and block.status == "archived"


def test_unknown_blocks_and_bad_messages_are_skipped_with_warnings() -> None:
    data = {
        "version": "0.3",
        "messages": [
            {"role": "user", "blocks": [{"type": "text", "text": "kept"}, {"type": "hologram"}]},
            {"role": "wizard", "blocks": []},
            {"role": "assistant", "blocks": [{"type": "hologram"}]},
            {"role": "system", "blocks": [{"type": "text", "text": "rebuilt on send"}]},
        ],
    }
    chat, warnings = decode(json.dumps(data))
    assert chat.messages == [Message("user", (TextBlock("kept"),))]
    assert len(warnings) == 3
    assert "hologram" in warnings[0]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("{not json", "not valid JSON"),
        ('{"version": "9.9", "messages": []}', "Unsupported version"),
        ("[]", "not a chat history"),
    ],
)
def test_unreadable_files_raise_a_clear_error(text: str, match: str) -> None:
    with pytest.raises(HistoryFormatError, match=match):
        decode(text)


def test_legacy_v0_2_rows_become_blocks() -> None:
    data = {
        "version": "0.2",
        "messages": [
            {"role": 0, "content": "system prompt"},
            {"role": 1, "content": "read main.cpp", "attachments": [
                {"filename": "notes.txt", "content": "note"}]},
            {"role": 5, "content": "let me look\n[Signature: abc]", "id": "r1"},
            {"role": 2, "content": "Reading it.", "id": "r1"},
            {"role": 3, "id": "call1", "toolName": "read_file",
             "toolArguments": '{"file_path": "main.cpp"}', "toolResult": "int main(){}"},
            {"role": 2, "content": "It is empty.", "id": "r1"},
            {"role": 5, "content": "", "isRedacted": True, "signature": "opaque"},
        ],
    }  # fmt: skip
    chat, warnings = decode(json.dumps(data))
    assert warnings == []
    roles = [m.role for m in chat.messages]
    assert roles == ["user", "assistant", "user", "assistant"]
    user = chat.messages[0]
    assert user.blocks[0] == TextBlock("read main.cpp")
    assert user.blocks[1] == TextBlock("File: notes.txt\n```\nnote\n```")
    first = chat.messages[1]
    assert first.blocks == (
        ThinkingBlock("let me look", "abc"),
        TextBlock("Reading it."),
        ToolUseBlock("call1", "read_file", {"file_path": "main.cpp"}),
    )
    assert chat.messages[2].blocks == (ToolResultBlock("call1", "read_file", "int main(){}"),)
    assert chat.messages[3].blocks == (TextBlock("It is empty."), RedactedThinkingBlock("opaque"))
    # Saving writes v0.3.
    assert json.loads(encode(chat))["version"] == "0.3"


def test_legacy_v0_1_is_read() -> None:
    data = {
        "version": "0.1",
        "messages": [{"role": 1, "content": "hi"}, {"role": 2, "content": "yo"}],
    }
    chat, _ = decode(json.dumps(data))
    assert [m.text for m in chat.messages] == ["hi", "yo"]
