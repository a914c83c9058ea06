"""Ollama native NDJSON streams replayed from recorded bytes, plus continuation and model list."""

import json

from qodeassist_lsp.wire import ollama
from qodeassist_lsp.wire.errors import ErrorCategory
from qodeassist_lsp.wire.events import (
    MessageStop,
    StreamError,
    TextDelta,
    ThinkingDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from qodeassist_lsp.wire.tools import ToolSpec
from tests.support.turns import collect_turn


def test_chat_excerpt_without_trailing_newline(kit) -> None:
    assert kit.replay_fixture("ollama/chat_stream_excerpt_sk.ndjson") == [
        TextDelta(" these"),
        TextDelta(" times"),
        TextDelta(" of"),
        TextDelta(" day"),
        TextDelta("."),
        Usage(input_tokens=10, output_tokens=239),
        MessageStop("end_turn", "stop"),
    ]


def test_chat_docs_final_line_without_done_reason(kit) -> None:
    assert kit.replay_fixture("ollama/chat_stream_docs_reconstructed.ndjson") == [
        TextDelta("The"),
        Usage(26, 282),
        MessageStop("end_turn", ""),
    ]


def test_chat_tool_call_with_object_arguments(kit) -> None:
    assert kit.replay_fixture("ollama/chat_stream_tools_docs_reconstructed.ndjson") == [
        ToolCallStart("qa0000000", "get_weather"),
        ToolCallEnd("qa0000000", "get_weather", {"city": "Tokyo"}),
        Usage(169, 15),
        MessageStop("tool_use", "stop"),
    ]


def test_chat_thinking(kit) -> None:
    assert kit.replay_fixture("ollama/chat_thinking_SYNTHETIC_sk.ndjson") == [
        ThinkingDelta("This is reasoning content"),
        TextDelta("Final answer"),
        MessageStop("end_turn", ""),
    ]


def test_generate_docs_stream_without_counters(kit) -> None:
    turn = collect_turn(kit.replay_fixture("ollama/generate_stream_docs.ndjson"))
    assert turn.text == "That's a fantastic question!"
    assert turn.usage is None and turn.stop == MessageStop("end_turn", "stop")


def test_generate_with_context_and_counters(kit) -> None:
    assert kit.replay_fixture("ollama/generate_stream_docs_reconstructed.ndjson") == [
        TextDelta("The"),
        Usage(26, 259),
        MessageStop("end_turn", ""),
    ]
    turn = collect_turn(kit.replay_fixture("ollama/generate_stream_excerpt_sk.ndjson"))
    assert turn.text == " daylight hours." and turn.usage == Usage(10, 304)
    assert turn.stop == MessageStop("end_turn", "stop")


def test_generate_midstream_error_after_text(kit) -> None:
    events = kit.replay_fixture("ollama/generate_midstream_error_docs.ndjson")
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == " Yes.Ican"
    assert isinstance(events[-1], StreamError) and len(events) == 5
    assert events[-1].error.category is ErrorCategory.PROVIDER
    assert "an error was encountered while running the model" in events[-1].error.message


def test_fim_suffix_reply_is_one_line(kit) -> None:
    # The docs example is JSON5 ("context": [...]); the server sends it as one compact line.
    text = kit.bytes("ollama/generate_suffix_nostream_docs.json5").decode()
    line = json.dumps(json.loads(text.replace("[...]", "[1, 2]"))).encode() + b"\n"
    turn = collect_turn(kit.replay("ollama_generate", line))
    assert turn.text.startswith("\n  if a == 0:\n    return b\n")
    assert turn.text.endswith("result = (a * b) / compute_gcd(a, b)\n")
    assert turn.usage == Usage(17, 63) and turn.stop == MessageStop("end_turn", "stop")


def test_json5_body_as_sent_is_an_error_not_a_crash(kit) -> None:
    events = kit.replay("ollama_generate", kit.bytes("ollama/generate_suffix_nostream_docs.json5"))
    assert len(events) == 1 and isinstance(events[0], StreamError)


def test_cut_stream_without_done(kit) -> None:
    data = kit.bytes("ollama/chat_stream_excerpt_sk.ndjson")
    events = kit.replay("ollama_chat", data[: data.rindex(b"\n") + 1])
    assert events[-1].error.category is ErrorCategory.PROVIDER
    assert '"done": true' in events[-1].error.message


def test_tool_definitions_are_openai_shaped() -> None:
    assert ollama.tool_definitions([ToolSpec("f", "F", {"type": "object"})])[0]["type"] == (
        "function"
    )


def test_model_list_from_tags(kit) -> None:
    payload = json.loads(kit.bytes("ollama/tags_docs.json"))
    assert ollama.parse_model_list(payload) == ["deepseek-r1:latest", "llama3.2:latest"]
