"""Gemini streams (SSE and streamed JSON array) replayed from recorded bytes, plus shapes."""

import json

from qodeassist_lsp.wire import google
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

SIG_GEMINI3 = "Et0BCtoBAXLI2nwMB4momyXTj+K3OPELPDi5Mq6bA5ZHuiKVF9m94gyxd+zdlC+s73nWxHx1ImnA9wPRG1sK"


def test_sse_text_uses_last_usage_snapshot(kit) -> None:
    assert kit.replay_fixture("gemini/sse_text.sse") == [
        TextDelta("The"),
        TextDelta(" capital of France"),
        TextDelta(" is Paris.\n"),
        Usage(input_tokens=13, output_tokens=8),
        MessageStop("end_turn", "STOP"),
    ]


def test_sse_function_call_in_one_chunk_gets_an_id(kit) -> None:
    assert kit.replay_fixture("gemini/sse_function_call_single_chunk.sse") == [
        ToolCallStart("qa0000000", "get_capital"),
        ToolCallEnd("qa0000000", "get_capital", {"country": "France"}),
        Usage(52, 5),
        MessageStop("tool_use", "STOP"),
    ]


def test_sse_text_after_function_response_with_empty_final_part(kit) -> None:
    turn = collect_turn(kit.replay_fixture("gemini/sse_text_after_function_response.sse"))
    assert turn.text == "The capital of Mexico is Mexico City."
    assert turn.usage == Usage(257, 8) and turn.stop == MessageStop("end_turn", "STOP")


def test_sse_thought_parts_then_signed_text(kit) -> None:
    events = kit.replay_fixture("gemini/sse_thought_parts_then_text.sse")
    thoughts = [e for e in events if isinstance(e, ThinkingDelta)]
    assert len(thoughts) == 5
    assert thoughts[0].thinking.startswith("**Clarifying User Goals**")
    assert thoughts[3].thinking.startswith("**Crafting Safe Instructions**")
    assert thoughts[4].thinking == "" and thoughts[4].signature.startswith("CiIB0e2Kb6Syj1a961Ef")
    turn = collect_turn(events)
    assert len(turn.thinking) == 1 and turn.thinking[0].signature == thoughts[4].signature
    assert turn.text.startswith("This is a great question! Safely crossing the street")
    assert turn.text.endswith(
        "**stay alert and be predictable**. Always assume a driver might not see you."
    )
    assert turn.usage == Usage(input_tokens=34, output_tokens=469, reasoning_tokens=787)


def test_array_mode_function_call_with_thought_signature(kit) -> None:
    events = kit.replay_fixture("gemini/array_function_call_gemini3.json")
    assert events[0] == ToolCallStart("qa0000000", "multiply")
    end = events[1]
    assert isinstance(end, ToolCallEnd) and end.arguments == {"y": 3, "x": 5}
    assert end.signature.startswith(SIG_GEMINI3) and end.signature.endswith("MygTHQ=")
    assert events[2:] == [
        Usage(input_tokens=60, output_tokens=16, reasoning_tokens=32),
        MessageStop("tool_use", "STOP"),
    ]


def test_array_mode_thoughts_and_text(kit) -> None:
    events = kit.replay_fixture("gemini/array_text_with_thoughts.json")
    assert events[0].thinking.startswith("**Considering the Constraint**")
    assert events[1] == TextDelta("Scoop")
    assert events[2].thinking == "" and events[2].signature.startswith("Eq0JCqoJARFNMg+W/PqA")
    assert events[3:] == [Usage(11, 2, reasoning_tokens=291), MessageStop("end_turn", "STOP")]


def test_cut_array_is_a_stream_error(kit) -> None:
    data = kit.bytes("gemini/array_text_with_thoughts.json")
    events = kit.replay("gemini", data[: data.index(b'"finishReason"')])
    assert isinstance(events[-1], StreamError)
    assert events[-1].error.category is ErrorCategory.PROVIDER


def test_error_object_in_the_stream(kit) -> None:
    body = kit.bytes("gemini/error_http_429_resource_exhausted.json")
    [event] = kit.replay("gemini", body)
    assert isinstance(event, StreamError) and event.error.retry_after == 34.4
    assert "RESOURCE_EXHAUSTED" in event.error.message


def test_blocked_prompt_and_malformed_call(kit) -> None:
    blocked = b'data: {"promptFeedback": {"blockReason": "SAFETY"}}\r\n\r\n'
    [event] = kit.replay("gemini", blocked)
    assert event.error.category is ErrorCategory.VALIDATION and "SAFETY" in event.error.message
    bad = b'data: {"candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL"}]}\r\n\r\n'
    [event] = kit.replay("gemini", bad)
    assert event.error.category is ErrorCategory.TOOL
    safety = b'data: {"candidates": [{"content": {"parts": []}, "finishReason": "SAFETY"}]}\n\n'
    assert kit.replay("gemini", safety) == [MessageStop("content_filter", "SAFETY")]


def test_tool_definitions_strip_unsupported_keywords_but_not_property_names() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "const": {"type": "string", "const": "x"},
            "not": {"type": "array", "items": {"type": "object", "$ref": "#/$defs/a"}},
            "mode": {"anyOf": [{"type": "string", "oneOf": []}, {"type": "null"}]},
        },
        "required": ["const"],
        "$defs": {"a": {"type": "object"}},
    }
    assert google.tool_definitions([ToolSpec("f", "Do f", schema)]) == [
        {
            "function_declarations": [
                {
                    "name": "f",
                    "description": "Do f",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "const": {"type": "string"},
                            "not": {"type": "array", "items": {"type": "object"}},
                            "mode": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                        },
                        "required": ["const"],
                    },
                }
            ]
        }
    ]
    assert google.tool_definitions([]) == []


def test_model_list_strips_prefix_filters_methods_and_paginates(kit) -> None:
    payload = json.loads(kit.bytes("gemini/models_list.json"))
    ids = google.parse_model_list(payload)
    assert ids[:3] == ["gemini-2.5-flash", "gemini-2.5-pro", "gemini-2.0-flash"]
    assert not any(i.startswith("models/") for i in ids)
    generating = [
        m for m in payload["models"] if "generateContent" in m["supportedGenerationMethods"]
    ]
    assert len(ids) == len(generating) < len(payload["models"])
    url = "https://generativelanguage.googleapis.com/v1beta/models?key=k"
    assert google.next_models_page(url, payload) == (
        url + "&pageToken=" + payload["nextPageToken"].replace("=", "%3D")
    )
