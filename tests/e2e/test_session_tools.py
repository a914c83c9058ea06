"""A tool round trip on every protocol that has tools, in-process through the Session API.

The model's first reply (a recorded tool-call stream) asks for a tool; the session runs the
registered test tool and sends the result back; the replay server records that second request,
whose body must carry the call and its result in the API's own shape; the recorded final answer
ends the request with ``finished``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from qodeassist_lsp.core.content import TextBlock, ToolResultBlock, ToolUseBlock, user_text
from qodeassist_lsp.core.events import (
    FinishedEvent,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
    UsageEvent,
)
from qodeassist_lsp.core.runtime import Runtime
from qodeassist_lsp.core.tools import ToolContext, ToolOutput
from qodeassist_lsp.wire.tools import ToolSpec
from tests.support.replay_server import ReplayServer, Reply, fixture_bytes
from tests.support.wire_cases import GENERATED, TARGETS, StreamCase, expected_events
from tests.support.workspace import PLANTED_KEY

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "a city"}},
}


class RecordingTool:
    """A tool that remembers its calls and answers with a fixed text."""

    permission = "read"

    def __init__(self, name: str, output: str) -> None:
        self.spec = ToolSpec(name, f"E2E test tool {name}", SCHEMA)
        self.output = output
        self.calls: list[dict[str, Any]] = []

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        self.calls.append(arguments)
        return ToolOutput(self.output)


Body = dict[str, Any]
Check = Callable[[Body, str, str], None]


def without_cache_control(value: Any) -> Any:
    """Anthropic prompt-cache markers are the server's own addition; ignore them here."""
    if isinstance(value, dict):
        return {k: without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_cache_control(v) for v in value]
    return value


# --------------------------------------------------------------------------- continuations
def anthropic_text_then_tool(body: Body, call_id: str, output: str) -> None:
    messages = without_cache_control(body["messages"])
    assert messages[-2] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "I'll check the current weather in Paris for you."},
            {
                "type": "tool_use",
                "id": call_id,
                "name": "get_weather",
                "input": {"location": "Paris"},
            },
        ],
    }
    assert messages[-1] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": call_id, "content": output}],
    }


def anthropic_thinking_then_tool(body: Body, call_id: str, output: str) -> None:
    messages = without_cache_control(body["messages"])
    thinking, tool_use = messages[-2]["content"]
    # The signed thinking block goes back verbatim, before the tool_use (extended thinking rule).
    assert thinking["type"] == "thinking"
    assert thinking["signature"].startswith(
        "EoQDCm0IDhgCKkCDzGs2kL2PgnDCZU/nM2wG2P1VIXCRHVnhDDzBQxNF"
    )
    assert thinking["thinking"] == (
        "The user wants me to:\n1. Use the fixed_version tool\n2. Tell them the version\n"
        "3. Make a short joke about it\n\nLet me first call the fixed_version tool to see what "
        "version it returns."
    )
    assert tool_use == {"type": "tool_use", "id": call_id, "name": "fixed_version", "input": {}}
    assert messages[-1] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": call_id, "content": output}],
    }


def openai_chat(body: Body, call_id: str, output: str) -> None:
    assistant, tool = body["messages"][-2:]
    [call] = assistant["tool_calls"]
    assert assistant["role"] == "assistant" and not assistant.get("content")
    assert call["id"] == call_id and call["type"] == "function"
    assert call["function"]["name"] == "GetWeatherArgs"
    assert isinstance(call["function"]["arguments"], str)  # a JSON *string* in Chat Completions
    assert json.loads(call["function"]["arguments"]) == {
        "city": "Edinburgh",
        "country": "UK",
        "units": "c",
    }
    assert tool == {"role": "tool", "tool_call_id": call_id, "content": output}


def responses(body: Body, call_id: str, output: str) -> None:
    call, result = body["input"][-2:]
    assert call["type"] == "function_call" and call["call_id"] == call_id  # call_id, not the fc_ id
    assert call["name"] == "get_capital"
    assert json.loads(call["arguments"]) == {"country": "France"}
    assert result == {"type": "function_call_output", "call_id": call_id, "output": output}


def responses_with_reasoning(body: Body, call_id: str, output: str) -> None:
    items = body["input"]
    reasoning, call, result = items[-3:]
    # A reasoning model's reasoning item must precede its function call when the conversation is
    # sent back statelessly (the recorded item carries encrypted_content for exactly this).
    assert reasoning.get("type") == "reasoning", items[-3:]
    assert reasoning["id"] == "rs_0050471a34b36ae60068c97bac4dcc819595fd0f80d6b3c405"
    assert reasoning["encrypted_content"].startswith("gAAAAABoyXvxI6jwG5j6rvTGC7PD6JN5758K")
    assert call["type"] == "function_call" and call["call_id"] == call_id
    assert json.loads(call["arguments"]) == {"result": 6666}
    assert result == {"type": "function_call_output", "call_id": call_id, "output": output}


def gemini(body: Body, call_id: str, output: str) -> None:
    model, user = body["contents"][-2:]
    assert model == {
        "role": "model",
        "parts": [{"functionCall": {"name": "get_capital", "args": {"country": "France"}}}],
    }
    # google.rpc FunctionResponse.response: "output" holds the result, "error" a failure.
    assert user == {
        "role": "user",
        "parts": [{"functionResponse": {"name": "get_capital", "response": {"output": output}}}],
    }


def gemini_signed(body: Body, call_id: str, output: str) -> None:
    model, user = body["contents"][-2:]
    [part] = model["parts"]
    assert part["functionCall"] == {"name": "multiply", "args": {"y": 3, "x": 5}}
    # Gemini 3 rejects a function call replayed without its thought signature.
    signature = json.loads(fixture_bytes("gemini/array_function_call_gemini3.json"))[0]
    signature = signature["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    assert part["thoughtSignature"] == signature
    assert user["parts"] == [
        {"functionResponse": {"name": "multiply", "response": {"output": output}}}
    ]


def ollama(body: Body, call_id: str, output: str) -> None:
    assistant, tool = body["messages"][-2:]
    assert assistant["role"] == "assistant" and assistant["content"] == ""
    [call] = assistant["tool_calls"]
    # Ollama takes arguments as a JSON object, not a string.
    assert call["function"] == {"name": "get_weather", "arguments": {"city": "Tokyo"}}
    assert tool["role"] == "tool" and tool["content"] == output
    assert tool["tool_name"] == "get_weather"


def mistral(body: Body, call_id: str, output: str) -> None:
    assistant, tool = body["messages"][-2:]
    [call] = assistant["tool_calls"]
    assert call["id"] == call_id == "gSIMJiOkT"
    assert call["function"]["name"] == "weather"
    assert json.loads(call["function"]["arguments"]) == {"location": "San Francisco"}
    assert tool["role"] == "tool" and tool["tool_call_id"] == call_id and tool["content"] == output


# --------------------------------------------------------------------------- tool definitions
def offered(shape: str, name: str, tools: list[Body]) -> None:
    """The first request offers exactly the registered tool, in the API's definition shape."""
    description = f"E2E test tool {name}"
    if shape == "anthropic":
        expected: Body = {"name": name, "description": description, "input_schema": SCHEMA}
    elif shape == "responses":
        expected = {
            "type": "function",
            "name": name,
            "description": description,
            "parameters": SCHEMA,
        }
    elif shape == "gemini":
        expected = {
            "function_declarations": [
                {"name": name, "description": description, "parameters": SCHEMA}
            ]
        }
    else:
        expected = {
            "type": "function",
            "function": {"name": name, "description": description, "parameters": SCHEMA},
        }
    assert tools == [expected]


SHAPES = {"claude": "anthropic", "responses": "responses", "gemini": "gemini"}


@dataclass(frozen=True)
class RoundTrip:
    id: str
    target: str
    first: str
    second: str
    tool: str
    arguments: dict[str, Any]
    call_id: str
    """The provider's id for the call, or GENERATED when the client must make one up."""
    check: Check


ROUND_TRIPS = (
    RoundTrip(
        "anthropic",
        "claude",
        "anthropic/stream_text_then_tool_use_sdk.sse",
        "anthropic/stream_text_hello.sse",
        "get_weather",
        {"location": "Paris"},
        "toolu_01NRLabsLyVHZPKxbKvkfSMn",
        anthropic_text_then_tool,
    ),
    RoundTrip(
        "anthropic-thinking",
        "claude",
        "anthropic/stream_thinking_then_tool_use.sse",
        "anthropic/stream_text_hello.sse",
        "fixed_version",
        {},
        "toolu_01825dXWLSoJwCst1qTsiWdb",
        anthropic_thinking_then_tool,
    ),
    RoundTrip(
        "openai-chat",
        "openai",
        "openai_chat/stream_tool_call_single.sse",
        "openai_chat/stream_text_with_usage.sse",
        "GetWeatherArgs",
        {"city": "Edinburgh", "country": "UK", "units": "c"},
        "call_c91SqDXlYFuETYv8mUHzz6pp",
        openai_chat,
    ),
    RoundTrip(
        "openai-responses",
        "responses",
        "openai_responses/stream_function_call.sse",
        "openai_responses/stream_text_after_function_call.sse",
        "get_capital",
        {"country": "France"},
        "call_kL0PCQV7M2WMoVX8V8OtYSAL",
        responses,
    ),
    RoundTrip(
        "openai-responses-reasoning",
        "responses",
        "openai_responses/stream_function_call_usage.sse",
        "openai_responses/stream_text_after_function_call.sse",
        "final_result",
        {"result": 6666},
        "call_CWXgs68YprAjp6t0371hiPOI",
        responses_with_reasoning,
    ),
    RoundTrip(
        "gemini",
        "gemini",
        "gemini/sse_function_call_single_chunk.sse",
        "gemini/sse_text_after_function_response.sse",
        "get_capital",
        {"country": "France"},
        GENERATED,
        gemini,
    ),
    RoundTrip(
        "gemini-3-signature",
        "gemini",
        "gemini/array_function_call_gemini3.json",
        "gemini/sse_text_after_function_response.sse",
        "multiply",
        {"y": 3, "x": 5},
        GENERATED,
        gemini_signed,
    ),
    RoundTrip(
        "ollama",
        "ollama-thinking",
        "ollama/chat_stream_tools_docs_reconstructed.ndjson",
        "ollama/chat_stream_excerpt_sk.ndjson",
        "get_weather",
        {"city": "Tokyo"},
        GENERATED,
        ollama,
    ),
    RoundTrip(
        "mistral",
        "mistral",
        "mistral/chat_stream_tool_call.sse",
        "mistral/chat_stream_text.sse",
        "weather",
        {"location": "San Francisco"},
        "gSIMJiOkT",
        mistral,
    ),
)


def usage_of(fixture: str, target: str) -> tuple[int, int, int, int]:
    events = expected_events(StreamCase(fixture, target, ""))
    [usage] = [e for e in events if e["kind"] == "usage"]
    return (
        usage["inputTokens"],
        usage["outputTokens"],
        usage["cachedTokens"],
        usage["reasoningTokens"],
    )


def final_text(fixture: str, target: str) -> str:
    events = expected_events(StreamCase(fixture, target, ""))
    return "".join(e["text"] for e in events if e["kind"] == "text")


@pytest.mark.parametrize("trip", ROUND_TRIPS, ids=[t.id for t in ROUND_TRIPS])
async def test_tool_round_trip(replay: ReplayServer, runtime: Runtime, trip: RoundTrip) -> None:
    target = TARGETS[trip.target]
    replay.script(
        target.route, [Reply(trip.first, split="events"), Reply(trip.second, split="events")]
    )
    session = runtime.sessions.create(target.agent)
    assert session.agent.enable_tools
    tool = RecordingTool(trip.tool, f"tool output for {trip.tool}: 42 °C, «ok»")
    session.tools.register(tool)

    request = session.send(user_text("Please use the tool."))
    events = [event async for event in request.events()]
    terminal = await request.wait()

    kinds = [e.kind for e in events]
    assert isinstance(terminal, FinishedEvent), events
    assert terminal.stop_reason == "end_turn" and events[-1] is terminal
    assert kinds.count("finished") == 1 and kinds.count("failed") == kinds.count("cancelled") == 0
    assert tool.calls == [trip.arguments]

    [call] = [e for e in events if isinstance(e, ToolCallEvent)]
    [result] = [e for e in events if isinstance(e, ToolResultEvent)]
    assert (call.name, call.arguments) == (trip.tool, trip.arguments)
    if trip.call_id != GENERATED:
        assert call.id == trip.call_id
    assert call.id and result.tool_use_id == call.id
    assert (result.name, result.content, result.is_error) == (trip.tool, tool.output, False)
    assert kinds.index("toolCall") < kinds.index("toolResult") < kinds.index("finished")
    assert {e.request_id for e in events} == {request.id}

    text = "".join(e.text for e in events if isinstance(e, TextEvent))
    assert text.endswith(final_text(trip.second, trip.target))
    # Usage covers both rounds.
    [usage] = [e for e in events if isinstance(e, UsageEvent)]
    first, second = usage_of(trip.first, trip.target), usage_of(trip.second, trip.target)
    totals = tuple(a + b for a, b in zip(first, second, strict=True))
    assert (
        usage.input_tokens,
        usage.output_tokens,
        usage.cached_tokens,
        usage.reasoning_tokens,
    ) == totals

    # Two requests; the first offers the tool, the second carries the call and its result.
    assert len(replay.requests) == 2 and replay.unmatched == []
    one, two = replay.requests
    assert one.path == two.path and one.method == two.method == "POST"
    offered(SHAPES.get(trip.target, "openai"), trip.tool, without_cache_control(one.json["tools"]))
    assert two.json.get("tools") == one.json["tools"]
    trip.check(two.json, call.id, tool.output)
    for sent in (one, two):
        assert PLANTED_KEY not in sent.echo

    # The history holds the whole exchange in order.
    roles = [m.role for m in session.history.messages]
    assert roles == ["user", "assistant", "user", "assistant"]
    uses = [b for b in session.history.messages[1].blocks if isinstance(b, ToolUseBlock)]
    assert [(u.id, u.name, u.input) for u in uses] == [(call.id, trip.tool, trip.arguments)]
    results = session.history.messages[2].blocks
    assert results == (ToolResultBlock(call.id, trip.tool, tool.output, False),)
    answer = [b for b in session.history.messages[3].blocks if isinstance(b, TextBlock)]
    assert "".join(b.text for b in answer) == final_text(trip.second, trip.target)


async def test_tool_error_goes_back_flagged(replay: ReplayServer, runtime: Runtime) -> None:
    target = TARGETS["claude"]
    replay.script(
        target.route,
        ["anthropic/stream_text_then_tool_use_sdk.sse", "anthropic/stream_text_hello.sse"],
    )
    session = runtime.sessions.create(target.agent)

    class Failing(RecordingTool):
        async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
            raise RuntimeError("weather service down")

    session.tools.register(Failing("get_weather", ""))
    request = session.send(user_text("weather?"))
    events = [e async for e in request.events()]
    [result] = [e for e in events if isinstance(e, ToolResultEvent)]
    assert result.is_error and "weather service down" in result.content
    assert isinstance(events[-1], FinishedEvent)
    messages = without_cache_control(replay.requests[1].json["messages"])
    assert messages[-1]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01NRLabsLyVHZPKxbKvkfSMn",
            "content": result.content,
            "is_error": True,
        }
    ]
