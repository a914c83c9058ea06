"""Chat Completions streams (OpenAI and compatible servers) replayed from recorded bytes."""

import json
import re

from qodeassist_lsp.wire import openai_chat
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
from qodeassist_lsp.wire.protocols import WireProtocol
from qodeassist_lsp.wire.registry import parser_for
from qodeassist_lsp.wire.tools import ToolSpec
from tests.support.turns import collect_turn


def test_text_with_usage_from_the_empty_choices_chunk(kit) -> None:
    events = kit.replay_fixture("openai_chat/stream_text_with_usage.sse")
    turn = collect_turn(events)
    assert turn.text == (
        "I'm unable to provide real-time weather updates. To get the current weather in San "
        "Francisco, I recommend checking a reliable weather website or a weather app."
    )
    assert events[-2:] == [
        Usage(input_tokens=14, output_tokens=30),
        MessageStop("end_turn", "stop"),
    ]


def test_single_tool_call_fragments_reassembled(kit) -> None:
    events = kit.replay_fixture("openai_chat/stream_tool_call_single.sse")
    assert events == [
        ToolCallStart("call_c91SqDXlYFuETYv8mUHzz6pp", "GetWeatherArgs"),
        ToolCallEnd(
            "call_c91SqDXlYFuETYv8mUHzz6pp",
            "GetWeatherArgs",
            {"city": "Edinburgh", "country": "UK", "units": "c"},
        ),
        Usage(input_tokens=76, output_tokens=24),
        MessageStop("tool_use", "tool_calls"),
    ]


def test_refusal_streams_as_text_and_stops_with_refusal(kit) -> None:
    turn = collect_turn(kit.replay_fixture("openai_chat/stream_refusal.sse"))
    assert turn.text == "I'm sorry, I can't assist with that request."
    assert turn.stop == MessageStop("refusal", "stop")
    assert turn.usage == Usage(79, 11)


def test_structured_output_is_plain_content(kit) -> None:
    turn = collect_turn(kit.replay_fixture("openai_chat/stream_structured_output_content.sse"))
    assert json.loads(turn.text) == {"city": "San Francisco", "temperature": 61, "units": "f"}
    assert turn.usage == Usage(79, 14) and turn.stop == MessageStop("end_turn", "stop")


def test_logprobs_chunks(kit) -> None:
    assert kit.replay_fixture("openai_chat/stream_logprobs.sse") == [
        TextDelta("Foo"),
        TextDelta("!"),
        Usage(9, 2),
        MessageStop("end_turn", "stop"),
    ]


def test_groq_reasoning_then_named_error_event_without_done(kit) -> None:
    events = kit.replay_fixture("openai_chat/compat_groq_event_error_midstream.sse")
    assert all(isinstance(e, ThinkingDelta) for e in events[:-1])
    assert events[0] == ThinkingDelta("We")
    turn = collect_turn(events)
    assert turn.thinking[0].thinking.startswith("We need to call the tool with invalid parameters")
    assert turn.thinking[0].thinking.endswith('second call with name: "test". Let\'s do that.')
    assert turn.thinking[0].signature == ""
    error = events[-1]
    assert isinstance(error, StreamError)
    assert error.error.category is ErrorCategory.TOOL
    assert "tool_use_failed" in error.error.message
    assert "get_something_by_name did not match schema" in error.error.message
    assert error.error.status == 400


def test_unparseable_error_chunk_is_a_stream_error(kit) -> None:
    [event] = kit.replay_fixture("openai_chat/error_midstream_server_error_excerpt.sse")
    assert isinstance(event, StreamError)
    assert event.error.category is ErrorCategory.PROVIDER
    assert "not valid JSON" in event.error.message
    assert "The server experienced an error" in event.error.provider_detail


def test_parseable_midstream_error_then_done() -> None:
    parser = parser_for(WireProtocol.OPENAI_CHAT, "https://x/v1/chat/completions")
    events = parser.feed(
        b'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
        b'data: {"error":{"message":"boom","type":"server_error","param":null,"code":null}}\n\n'
        b"data: [DONE]\n\n"
    )
    assert events[0] == TextDelta("Hi") and isinstance(events[1], StreamError)
    assert events[1].error.category is ErrorCategory.PROVIDER and "boom" in events[1].error.message
    assert parser.close() == []


def test_openrouter_error_inside_a_normal_chunk(kit) -> None:
    data = (
        b": OPENROUTER PROCESSING\n\n"
        b'data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"error"}],'
        b'"error":{"code":502,"message":"Upstream failed"}}\n\ndata: [DONE]\n\n'
    )
    [event] = kit.replay("openai_chat", data)
    assert isinstance(event, StreamError) and event.error.status == 502
    assert event.error.category is ErrorCategory.PROVIDER


def test_reasoning_variants_are_deltas_not_snapshots(kit) -> None:
    data = (
        b'data: {"choices":[{"index":0,"delta":{"reasoning_content":"a"}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{"reasoning":"b","reasoning_details":'
        b'[{"type":"reasoning.text","text":"b"}]}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{"reasoning_details":'
        b'[{"type":"reasoning.summary","summary":"c"}]}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}\n\n'
        b"data: [DONE]\n\n"
    )
    assert kit.replay("openai_chat", data) == [
        ThinkingDelta("a"),
        ThinkingDelta("b"),
        ThinkingDelta("c"),
        TextDelta("done"),
        MessageStop("end_turn", "stop"),
    ]


def test_interleaved_parallel_calls_and_repeated_names(kit) -> None:
    data = (
        b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c0","type":'
        b'"function","function":{"name":"a","arguments":"{\\"x\\""}}]}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c1","type":'
        b'"function","function":{"name":"b","arguments":""}}]}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c0","function":'
        b'{"name":"a","arguments":": 1}"}}]}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":'
        b'{"arguments":"{\\"ticker\\":\\"AAPL\\",\\"exchange\\":\\"NASDAQ\\"}"}}]}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n'
        b"data: [DONE]\n\n"
    )
    turn = collect_turn(kit.replay("openai_chat", data))
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("c0", "a", {"x": 1}),
        ("c1", "b", {"ticker": "AAPL", "exchange": "NASDAQ"}),
    ]


def test_invalid_tool_arguments_are_a_tool_error_not_a_crash(kit) -> None:
    data = (
        b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c0",'
        b'"function":{"name":"f","arguments":"{oops"}}]},"finish_reason":"tool_calls"}]}\n\n'
        b"data: [DONE]\n\n"
    )
    events = kit.replay("openai_chat", data)
    assert events[0] == ToolCallStart("c0", "f")
    assert isinstance(events[1], StreamError) and not events[1].final
    assert events[1].error.category is ErrorCategory.TOOL
    assert events[1].error.provider_detail == "{oops"
    assert events[-1] == MessageStop("tool_use", "tool_calls")


def test_eof_without_done_and_without_finish_reason_is_cut(kit) -> None:
    data = kit.bytes("openai_chat/stream_text_with_usage.sse")
    cut = data[: data.index(b'"finish_reason":"stop"')]
    cut = cut[: cut.rindex(b"\n\n") + 2]
    events = kit.replay("openai_chat", cut)
    assert isinstance(events[-1], StreamError)
    assert events[-1].error.category is ErrorCategory.PROVIDER
    assert "cut off" in events[-1].error.message and "[DONE]" in events[-1].error.message


def test_legacy_completions_choices_text(kit) -> None:
    data = (
        b'data: {"choices":[{"index":0,"text":"def ","finish_reason":null}]}\n\n'
        b'data: {"choices":[{"index":0,"text":"f():","finish_reason":"length"}],'
        b'"usage":{"prompt_tokens":5,"completion_tokens":2}}\n\n'
        b"data: [DONE]\n\n"
    )
    make = kit.maker(WireProtocol.LLAMACPP, "http://localhost:8080/v1/completions")
    assert kit.replay(make, data) == [
        TextDelta("def "),
        TextDelta("f():"),
        Usage(5, 2),
        MessageStop("max_tokens", "length"),
    ]


def test_tool_definitions() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    assert openai_chat.tool_definitions([ToolSpec("search", "Search code", schema)]) == [
        {
            "type": "function",
            "function": {"name": "search", "description": "Search code", "parameters": schema},
        }
    ]


def test_model_list_from_the_openapi_example(kit) -> None:
    raw = kit.bytes("openai_chat/models_list_openapi_example.json").decode()
    # The published example has a trailing comma; the file is kept as published.
    payload = json.loads(re.sub(r",(\s*[\]}])", r"\1", raw))
    assert openai_chat.parse_model_list(payload) == ["model-id-0", "model-id-1", "model-id-2"]
    assert openai_chat.next_models_page("https://x/v1/models", payload) is None
