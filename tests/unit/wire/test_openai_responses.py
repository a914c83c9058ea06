"""Responses API streams replayed from recorded bytes, plus tools and continuation shapes."""

import json

from qodeassist_lsp.wire import openai_responses
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


def test_text(kit) -> None:
    assert kit.replay_fixture("openai_responses/stream_text.sse") == [
        TextDelta("pong"),
        Usage(input_tokens=11, output_tokens=5),
        MessageStop("end_turn", "completed"),
    ]


def test_text_after_function_call(kit) -> None:
    turn = collect_turn(kit.replay_fixture("openai_responses/stream_text_after_function_call.sse"))
    assert turn.text == "The capital of France is Paris."
    assert turn.usage == Usage(278, 9) and turn.stop == MessageStop("end_turn", "completed")


def test_function_call_uses_call_id(kit) -> None:
    assert kit.replay_fixture("openai_responses/stream_function_call.sse") == [
        ToolCallStart("call_kL0PCQV7M2WMoVX8V8OtYSAL", "get_capital"),
        ToolCallEnd("call_kL0PCQV7M2WMoVX8V8OtYSAL", "get_capital", {"country": "France"}),
        Usage(255, 16),
        MessageStop("tool_use", "completed"),
    ]


def test_modern_function_call_with_sequence_numbers(kit) -> None:
    turn = collect_turn(kit.replay_fixture("openai_responses/stream_function_call_modern.sse"))
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("call_sVidsfFJ6zlzRpelrPkTPlpd", "multiply", {"a": 1231, "b": 2331})
    ]
    assert turn.usage == Usage(58, 23)


def test_encrypted_reasoning_then_function_call(kit) -> None:
    events = kit.replay_fixture("openai_responses/stream_function_call_usage.sse")
    reasoning = events[0]
    assert isinstance(reasoning, ThinkingDelta) and reasoning.redacted
    replay = json.loads(reasoning.signature)
    assert replay["type"] == "reasoning" and replay["summary"] == []
    assert replay["id"] == "rs_0050471a34b36ae60068c97bac4dcc819595fd0f80d6b3c405"
    assert replay["encrypted_content"].startswith("gAAAAABoyXvxI6jwG5j6rvTGC7PD6JN5758K")
    assert events[1:] == [
        ToolCallStart("call_CWXgs68YprAjp6t0371hiPOI", "final_result"),
        ToolCallEnd("call_CWXgs68YprAjp6t0371hiPOI", "final_result", {"result": 6666}),
        Usage(input_tokens=53, output_tokens=469, reasoning_tokens=448),
        MessageStop("tool_use", "completed"),
    ]


def test_error_event_then_response_failed(kit) -> None:
    [event] = kit.replay_fixture("openai_responses/error_event_then_response_failed.sse")
    assert isinstance(event, StreamError)
    assert event.error.category is ErrorCategory.PROVIDER
    assert "insufficient_quota" in event.error.message
    assert "You exceeded your current quota" in event.error.message


def test_reasoning_summary_deltas_then_item_signature(kit) -> None:
    def ev(kind: str, **fields: object) -> bytes:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n".encode()

    item = {"type": "reasoning", "id": "rs_1", "summary": [], "status": "in_progress"}
    done = {**item, "summary": [{"type": "summary_text", "text": "Plan."}], "status": "completed"}
    data = (
        ev("response.output_item.added", output_index=0, item=item)
        + ev("response.reasoning_summary_text.delta", item_id="rs_1", summary_index=0, delta="Pl")
        + ev("response.reasoning_summary_text.delta", item_id="rs_1", summary_index=0, delta="an.")
        + ev("response.output_item.done", output_index=0, item=done)
        + ev("response.output_text.done", item_id="msg_1", content_index=0, text="Hi")
        + ev(
            "response.incomplete",
            response={
                "status": "incomplete",
                "incomplete_details": {"reason": "max_output_tokens"},
            },
        )
    )
    events = kit.replay("openai_responses", data)
    assert events[:2] == [ThinkingDelta("Pl"), ThinkingDelta("an.")]
    assert json.loads(events[2].signature) == {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "Plan."}],
    }
    assert not events[2].redacted
    assert events[3:] == [TextDelta("Hi"), MessageStop("max_tokens", "max_output_tokens")]


def test_eof_before_a_terminal_event_is_cut(kit) -> None:
    data = kit.bytes("openai_responses/stream_text.sse")
    events = kit.replay("openai_responses", data[: data.index(b"event: response.completed")])
    assert events[0] == TextDelta("pong") and isinstance(events[-1], StreamError)
    assert "response.completed" in events[-1].error.message


def test_tool_definitions() -> None:
    assert openai_responses.tool_definitions([ToolSpec("f", "Do f", {"type": "object"})]) == [
        {"type": "function", "name": "f", "description": "Do f", "parameters": {"type": "object"}}
    ]


def test_model_list_is_openai_shaped() -> None:
    assert openai_responses.parse_model_list({"data": [{"id": "gpt-5"}]}) == ["gpt-5"]
