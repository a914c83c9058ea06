from qodeassist_lsp.core.content import (
    CompletionBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from qodeassist_lsp.core.context_assembler import assemble_context


def test_replay_rules_of_the_original() -> None:
    messages = [
        Message("user", (TextBlock("q"), ImageBlock("AAA", "image/png"))),
        Message("assistant", (ThinkingBlock("unsigned"),)),  # only unsigned thinking: dropped
        Message(
            "assistant",
            (
                ThinkingBlock("signed", "sig"),
                RedactedThinkingBlock("xx"),
                TextBlock("let me look"),
                ToolUseBlock("t1", "read_file", {"p": 1}),
                ToolUseBlock("orphan", "read_file", {}),
            ),
        ),
        Message("user", (ToolResultBlock("t1", "", "data"), ToolResultBlock("ghost", "x", "?"))),
    ]
    ctx = assemble_context(messages, "sys", model="m", language="python")
    assert ctx["system_prompt"] == "sys" and ctx["model"] == "m" and ctx["language"] == "python"
    assert ctx["prefix"] is None and ctx["suffix"] is None
    history = ctx["history"]
    assert [h["role"] for h in history] == ["user", "assistant", "user"]
    assert history[0]["images"] == [{"data": "AAA", "media_type": "image/png", "is_url": False}]
    assert [b["type"] for b in history[1]["content_blocks"]] == [
        "thinking",
        "redacted_thinking",
        "text",
        "tool_use",
    ]
    assert history[1]["content"] == "let me look"
    assert history[2]["content_blocks"] == [
        {
            "type": "tool_result",
            "tool_use_id": "t1",
            "name": "read_file",
            "content": "data",
            "is_error": False,
        }
    ]


def test_completion_block_sets_prefix_and_suffix_only() -> None:
    ctx = assemble_context([Message("user", (CompletionBlock("def f(", "):\n"),))])
    assert ctx["prefix"] == "def f(" and ctx["suffix"] == "):\n"
    assert ctx["history"] == [] and ctx["single_line"] is False
    one = assemble_context([Message("user", (CompletionBlock("x = 1", "\n", single_line=True),))])
    assert one["single_line"] is True
    assert ctx["healed_word"] == ""
    healed = assemble_context([Message("user", (CompletionBlock("x =", "", healed_word=" fo"),))])
    assert healed["healed_word"] == " fo"


def test_tool_use_signature_is_replayed_only_when_present() -> None:
    messages = [
        Message("assistant", (ToolUseBlock("a", "f", {}, signature="sig"), ToolUseBlock("b", "g"))),
        Message("user", (ToolResultBlock("a", "f", "1"), ToolResultBlock("b", "g", "2"))),
    ]
    uses = assemble_context(messages)["history"][0]["content_blocks"]
    assert uses[0]["signature"] == "sig" and "signature" not in uses[1]
