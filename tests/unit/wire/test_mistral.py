"""Mistral/Codestral streams: OpenAI chunks with Mistral's own tool-call and content shapes."""

import json

from qodeassist_lsp.wire import openai_chat
from qodeassist_lsp.wire.events import MessageStop, TextDelta, ThinkingDelta, ToolCallEnd, Usage
from qodeassist_lsp.wire.protocols import WireProtocol
from qodeassist_lsp.wire.registry import protocol_api
from tests.support.turns import collect_turn


def test_text_with_usage_on_the_finish_chunk(kit) -> None:
    turn = collect_turn(kit.replay_fixture("mistral/chat_stream_text.sse"))
    assert turn.text == "Hello, world! This is a test response."
    assert turn.usage == Usage(13, 8) and turn.stop == MessageStop("end_turn", "stop")


def test_whole_tool_call_without_index_or_type(kit) -> None:
    events = kit.replay_fixture("mistral/chat_stream_tool_call.sse")
    assert ToolCallEnd("gSIMJiOkT", "weather", {"location": "San Francisco"}) in events
    assert events[-2:] == [Usage(124, 22), MessageStop("tool_use", "tool_calls")]


def test_2024_tool_call_without_id_gets_a_nine_character_id(kit) -> None:
    turn = collect_turn(kit.replay_fixture("mistral/chat_stream_tool_call_2024.sse"))
    [call] = turn.tool_calls
    assert call.name == "WeatherPlugin-GetWeather" and len(call.id) == 9 and call.id.isalnum()
    assert call.arguments == {"location": "Paris", "unit": "celsius"}
    assert turn.usage == Usage(118, 31)


def test_non_streamed_fim_reply(kit) -> None:
    turn = collect_turn(kit.replay_fixture("mistral/fim_completion_nostream_example.json"))
    assert turn.text.startswith("add_numbers(a: int, b: int) -> int:\n")
    assert turn.text.endswith('code has to be in python\n    """\n')
    assert turn.usage == Usage(8, 91) and turn.stop == MessageStop("end_turn", "stop")


def test_magistral_content_arrays_and_model_length(kit) -> None:
    data = (
        b'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":[{"type":"thinking",'
        b'"thinking":[{"type":"text","text":"Let me"}]}]}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":" think"}'
        b',{"type":"text","text":"4"}]}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{"content":""},"finish_reason":"model_length"}],'
        b'"usage":{"prompt_tokens":3,"completion_tokens":9}}\n\ndata: [DONE]\n\n'
    )
    assert kit.replay("mistral", data) == [
        ThinkingDelta("Let me"),
        ThinkingDelta(" think"),
        TextDelta("4"),
        Usage(3, 9),
        MessageStop("max_tokens", "model_length"),
    ]


def test_finish_reason_error_fails_the_reply(kit) -> None:
    data = b'data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"error"}]}\n\n'
    events = kit.replay("mistral", data)
    assert events[0] == TextDelta("x") and events[-1].kind == "error"


def test_model_cards_bare_array(kit) -> None:
    cards = json.loads(kit.bytes("mistral/models_list_example.json"))
    assert protocol_api(WireProtocol.MISTRAL) is openai_chat
    assert openai_chat.parse_model_list(cards) == ["<model_id>"]
