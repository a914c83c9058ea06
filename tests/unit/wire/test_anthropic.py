"""Anthropic Messages streams replayed from recorded bytes, plus tools and continuation shapes."""

import json

from qodeassist_lsp.wire import anthropic
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

SIG_TEXT = "EuYDCmMIDBgCKkC05Zda4P+Cdk/LQKE+Aol4ZY3EY4wLDrf8XcApz2PiqrxiRjS7uY1kGtZ63vVlaVm"
SIG_TOOL = "EoQDCm0IDhgCKkCDzGs2kL2PgnDCZU/nM2wG2P1VIXCRHVnhDDzBQxNF1fl4QBXEKLxRItNJ2MwFdW9"


def test_text_hello(kit) -> None:
    assert kit.replay_fixture("anthropic/stream_text_hello.sse") == [
        TextDelta("Hello"),
        Usage(input_tokens=10, output_tokens=4),
        MessageStop("end_turn", "end_turn"),
    ]


def test_thinking_deltas_then_signature_then_text(kit) -> None:
    events = kit.replay_fixture("anthropic/stream_thinking_signature_text.sse")
    thinking = [e for e in events if isinstance(e, ThinkingDelta)]
    assert [e.thinking for e in thinking][:2] == [
        "The user wants",
        " two names for a pet pelican, and they want me to be brief. I'll suggest two names "
        "that would suit a pelican well.",
    ]
    # The empty thinking_delta is dropped; the signature closes the block.
    assert thinking[-1].thinking == "" and thinking[-1].signature.startswith(SIG_TEXT)
    assert thinking[-1].signature.endswith("FjZiGAE=") and not thinking[-1].redacted
    turn = collect_turn(events)
    assert len(turn.thinking) == 1
    assert turn.thinking[0].thinking.endswith("Let me give two brief, catchy names:")
    assert "- Pelé (play on pelican)" in turn.thinking[0].thinking
    assert turn.text == (
        '1. **Pouch** - references their iconic bill pouch\n2. **Pelé** - playful take on "pelican"'
    )
    assert events[-2:] == [Usage(46, 133), MessageStop("end_turn", "end_turn")]


def test_thinking_then_tool_use_with_empty_input(kit) -> None:
    events = kit.replay_fixture("anthropic/stream_thinking_then_tool_use.sse")
    tool_events = [e for e in events if isinstance(e, ToolCallStart | ToolCallEnd)]
    assert tool_events == [
        ToolCallStart("toolu_01825dXWLSoJwCst1qTsiWdb", "fixed_version"),
        ToolCallEnd("toolu_01825dXWLSoJwCst1qTsiWdb", "fixed_version", {}),
    ]
    turn = collect_turn(events)
    assert turn.thinking[0].signature.startswith(SIG_TOOL)
    assert turn.usage == Usage(input_tokens=598, output_tokens=92, reasoning_tokens=53)
    assert turn.stop == MessageStop("tool_use", "tool_use")


def test_text_then_tool_use_with_fragmented_json(kit) -> None:
    events = kit.replay_fixture("anthropic/stream_text_then_tool_use_sdk.sse")
    assert events == [
        TextDelta("I"),
        TextDelta("'ll check the current weather in Paris for you."),
        ToolCallStart("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather"),
        ToolCallEnd("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", {"location": "Paris"}),
        Usage(input_tokens=377, output_tokens=65),
        MessageStop("tool_use", "tool_use"),
    ]


def test_parallel_tool_use_with_empty_input(kit) -> None:
    turn = collect_turn(kit.replay_fixture("anthropic/stream_parallel_tool_use_empty_input.sse"))
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("toolu_01LtHJmixrs9NcWQkK8hu8hj", "pelican_name_generator", {}),
        ("toolu_01N8a4jWyf116qKTMqKKmjyt", "pelican_name_generator", {}),
    ]
    assert turn.usage == Usage(542, 62) and turn.stop == MessageStop("tool_use", "tool_use")


def test_max_tokens_cuts_tool_input_reported_not_crashed(kit) -> None:
    events = kit.replay_fixture("anthropic/stream_max_tokens_truncated_tool_input.sse")
    turn = collect_turn(events)
    assert turn.text.startswith("I'll create a comprehensive tax guide")
    assert turn.text.endswith("Let me do that for you now.")
    assert ToolCallStart("toolu_01EKqbqmZrGRXy18eN7m9kvY", "make_file") in events
    assert turn.tool_calls == ()
    [tool_error] = [e for e in events if isinstance(e, StreamError)]
    assert not tool_error.final
    [error] = turn.errors
    assert error.category is ErrorCategory.TOOL
    assert "'make_file'" in error.message and "max_tokens" in error.message
    assert error.provider_detail.startswith('{"filename": "taxes.txt"')
    assert error.provider_detail.endswith('\n"Filing taxes')
    # The tool error is not final: usage and the stop reason still follow.
    assert events[-2:] == [Usage(450, 124), MessageStop("max_tokens", "max_tokens")]


def test_web_search_server_tools_produce_no_tool_events(kit) -> None:
    events = kit.replay_fixture("anthropic/stream_web_search_citations.sse")
    assert not any(isinstance(e, ToolCallStart | ToolCallEnd) for e in events)
    turn = collect_turn(events)
    assert turn.text.startswith("Based on the search results, here's the current weather in San")
    assert "with a high of 63°F." in turn.text
    assert turn.text.endswith("a Level 1 storm system bringing periods of rain this weekend.")
    assert turn.usage == Usage(10423, 341)
    assert turn.stop == MessageStop("end_turn", "end_turn")


def test_midstream_overloaded_error_event(kit) -> None:
    [event] = kit.replay_fixture("anthropic/error_event_overloaded.sse")
    assert isinstance(event, StreamError)
    assert event.error.category is ErrorCategory.PROVIDER
    assert "overloaded_error" in event.error.message and "Overloaded" in event.error.message


def test_midstream_api_error_after_text(kit) -> None:
    events = kit.replay_fixture("anthropic/error_midstream_api_error_excerpt.sse")
    assert events[:2] == [TextDelta("d with a replacement character"), TextDelta(" (")]
    assert isinstance(events[2], StreamError) and len(events) == 3
    assert events[2].error.category is ErrorCategory.PROVIDER
    assert "Internal server error" in events[2].error.message


def test_redacted_thinking_block_and_context_window_stop(kit) -> None:
    data = (
        b'event: message_start\ndata: {"type":"message_start","message":{"usage":'
        b'{"input_tokens":5,"cache_read_input_tokens":3,"output_tokens":1}}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va"}}\n\n'
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","delta":'
        b'{"stop_reason":"model_context_window_exceeded"},"usage":{"output_tokens":9}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    assert kit.replay("anthropic", data) == [
        ThinkingDelta("", "EmwKAhgBEgy3va", redacted=True),
        Usage(input_tokens=5, output_tokens=9, cached_tokens=3),
        MessageStop("max_tokens", "model_context_window_exceeded"),
    ]


def test_non_streamed_message_body(kit) -> None:
    body = {
        "type": "message",
        "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "text", "text": "Hi"},
            {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"a": 1}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 3, "output_tokens": 4},
    }
    turn = collect_turn(kit.replay("anthropic", json.dumps(body, indent=2).encode()))
    assert turn.text == "Hi" and turn.thinking[0].signature == "sig"
    assert turn.tool_calls[0].arguments == {"a": 1} and turn.stop.stop_reason == "tool_use"


def test_tool_definitions() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    assert anthropic.tool_definitions([ToolSpec("weather", "Get weather", schema)]) == [
        {"name": "weather", "description": "Get weather", "input_schema": schema}
    ]
    assert anthropic.tool_definitions([ToolSpec("now", "Time")])[0]["input_schema"] == {
        "type": "object",
        "properties": {},
    }


def test_model_list_and_pagination(kit) -> None:
    payload = json.loads(kit.bytes("anthropic/models_list.json"))
    assert anthropic.parse_model_list(payload) == ["claude-sonnet-4-20250514"]
    url = "https://api.anthropic.com/v1/models?limit=1000"
    assert anthropic.next_models_page(url, payload) == (
        "https://api.anthropic.com/v1/models?limit=1000&after_id=last_id"
    )
    assert anthropic.next_models_page(url, {**payload, "has_more": False}) is None
