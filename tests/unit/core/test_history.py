from qodeassist_lsp.core.content import Message, TextBlock, ThinkingBlock, ToolUseBlock, user_text
from qodeassist_lsp.core.history import ConversationHistory


def test_streamed_text_merges_into_one_block_and_versions_bump() -> None:
    history = ConversationHistory([Message("user", user_text("hi"))])
    v0 = history.version
    history.append_blocks("r1", [TextBlock("Hel")])
    history.append_blocks("r1", [TextBlock("lo")])
    history.append_blocks("r1", [ToolUseBlock("t1", "read_file", {"path": "a"})])
    history.append_blocks("r1", [TextBlock("!")])
    assert history.messages[-1] == Message(
        "assistant",
        (TextBlock("Hello"), ToolUseBlock("t1", "read_file", {"path": "a"}), TextBlock("!")),
        "r1",
    )
    assert history.version > v0
    assert history.last_assistant_text() == "Hello!"


def test_thinking_deltas_merge_until_signed() -> None:
    history = ConversationHistory()
    history.append_blocks("r", [ThinkingBlock("a")])
    history.append_blocks("r", [ThinkingBlock("b", "sig")])
    history.append_blocks("r", [ThinkingBlock("c")])
    assert history.messages[-1].blocks == (ThinkingBlock("ab", "sig"), ThinkingBlock("c"))


def test_new_request_id_opens_a_new_message_and_truncate_rolls_back() -> None:
    history = ConversationHistory()
    history.append_blocks("r1", [TextBlock("a")])
    history.append(Message("user", user_text("next")))
    history.append_blocks("r2", [TextBlock("b")])
    assert [m.id for m in history.messages] == ["r1", "", "r2"]
    history.truncate(1)
    assert len(history) == 1 and history.last_assistant_text() == "a"
    history.reset()
    assert history.last_assistant_text() == ""
