"""llama.cpp streams: native /completion and /infill objects, and its OpenAI-compatible chunks."""

import json

from qodeassist_lsp.wire import openai_chat
from qodeassist_lsp.wire.errors import ErrorCategory
from qodeassist_lsp.wire.events import MessageStop, StreamError, TextDelta, ThinkingDelta, Usage
from qodeassist_lsp.wire.protocols import WireProtocol
from qodeassist_lsp.wire.registry import protocol_api
from tests.support.turns import collect_turn

FINAL = (
    b'data: {"index":0,"content":"","id_slot":0,"stop":true,"model":"m","tokens_predicted":5,'
    b'"tokens_evaluated":16,"stop_type":"word","stopping_word":"?\\n","tokens_cached":20,'
    b'"timings":{"prompt_n":16,"predicted_n":5}}\n\n'
)


def test_native_excerpt_without_the_stop_event_is_cut(kit) -> None:
    events = kit.replay_fixture("llamacpp/completion_stream_excerpt.sse")
    assert events[:3] == [TextDelta(" the"), TextDelta(" planet"), TextDelta(" Mars")]
    assert isinstance(events[3], StreamError) and len(events) == 4
    assert events[3].error.category is ErrorCategory.PROVIDER


def test_native_stream_with_its_summary_event(kit) -> None:
    data = kit.bytes("llamacpp/completion_stream_excerpt.sse") + FINAL
    for url in ("http://h:8080/completion", "http://h:8080/infill"):
        assert kit.replay(kit.maker(WireProtocol.LLAMACPP, url), data) == [
            TextDelta(" the"),
            TextDelta(" planet"),
            TextDelta(" Mars"),
            Usage(input_tokens=16, output_tokens=5, cached_tokens=20),
            MessageStop("stop_sequence", "word"),
        ]


def test_native_error_on_the_legacy_error_field_and_as_data(kit) -> None:
    legacy = b'data: {"content":"a","stop":false}\n\nerror: {"code":500,"message":"slot died",' + (
        b'"type":"server_error"}\n\n'
    )
    events = kit.replay("llamacpp_native", legacy)
    assert events[0] == TextDelta("a") and "slot died" in events[1].error.message
    modern = b'data: {"error":{"code":400,"message":"bad","type":"invalid_request_error"}}\n\n'
    [event] = kit.replay("llamacpp_native", modern)
    assert event.error.category is ErrorCategory.VALIDATION


def test_oai_final_chunk_with_usage_and_no_done(kit) -> None:
    assert kit.replay_fixture("llamacpp/chat_completions_final_chunk.sse") == [
        Usage(input_tokens=43, output_tokens=1),
        MessageStop("max_tokens", "length"),
    ]


def test_oai_reasoning_content_excerpt(kit) -> None:
    events = kit.replay_fixture("llamacpp/chat_completions_reasoning_excerpt.sse")
    assert events[:2] == [ThinkingDelta(" it"), ThinkingDelta(" handles")]
    assert isinstance(events[2], StreamError)  # the excerpt ends before a finish_reason


def test_non_streamed_native_reply(kit) -> None:
    body = json.dumps({"content": "x = 1", "stop": True, "stop_type": "eos", "tokens_predicted": 3})
    turn = collect_turn(kit.replay("llamacpp_native", body.encode()))
    assert turn.text == "x = 1" and turn.stop == MessageStop("end_turn", "eos")


def test_shapes_delegate_to_openai_chat() -> None:
    assert protocol_api(WireProtocol.LLAMACPP) is openai_chat
    assert openai_chat.parse_model_list({"object": "list", "data": [{"id": "gemma"}]}) == ["gemma"]
