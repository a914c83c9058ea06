"""Ollama's native API (``/api/chat``, ``/api/generate``, ``/api/tags``).

The stream is NDJSON: one compact object per line, ``error`` checked first on every line,
the line with ``"done": true`` ends it (EOF before that means it was cut). Tool calls arrive
whole with ``arguments`` as an object, usually without an id (one is made up); the stop
reason stays ``stop``, so a reply with tool calls is normalised to ``tool_use``. A
non-streamed reply is one line and parses the same way. Ollama's OpenAI-compatible ``/v1``
endpoints are handled by `qodeassist_lsp.wire.openai_chat`.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from qodeassist_lsp.wire import openai_chat
from qodeassist_lsp.wire.events import StopReason, TextDelta, ThinkingDelta, Usage
from qodeassist_lsp.wire.parser import (
    JsonObject,
    NDJSONParser,
    PendingCall,
    int_of,
    obj,
    text_of,
)
from qodeassist_lsp.wire.tools import ToolResult, is_synthetic_id
from qodeassist_lsp.wire.turns import AssistantTurn

_STOP: dict[str, StopReason] = {"stop": "end_turn", "length": "max_tokens"}

tool_definitions = openai_chat.tool_definitions


def normalise_stop(raw: str) -> StopReason:
    """Map a ``done_reason`` onto the shared vocabulary (``load``/``unload`` become other)."""
    return _STOP.get(raw, "other") if raw else "end_turn"


class OllamaChatParser(NDJSONParser):
    """Parses an ``/api/chat`` NDJSON stream (``message.content``/``thinking``/``tool_calls``)."""

    terminal_marker = '"done": true'

    def _on_payload(self, payload: JsonObject) -> None:
        self._on_content(payload)
        if payload.get("done") is True:
            if "eval_count" in payload or "prompt_eval_count" in payload:
                self._usage = Usage(
                    # The counters are omitempty: a fully cached prompt has no prompt_eval_count.
                    input_tokens=int_of(payload.get("prompt_eval_count")),
                    output_tokens=int_of(payload.get("eval_count")),
                )
            raw = text_of(payload.get("done_reason"))
            self._finish(normalise_stop(raw), raw)

    def _on_content(self, payload: JsonObject) -> None:
        message = obj(payload.get("message"))
        if thinking := text_of(message.get("thinking")):
            self._emit(ThinkingDelta(thinking))
        if content := text_of(message.get("content")):
            self._emit(TextDelta(content))
        tool_calls = message.get("tool_calls")
        for entry in tool_calls if isinstance(tool_calls, list) else []:
            entry = obj(entry)
            function = obj(entry.get("function"))
            call = PendingCall(id=text_of(entry.get("id")), name=text_of(function.get("name")))
            arguments = function.get("arguments")
            if isinstance(arguments, dict):
                self._end_call(call, arguments=arguments)
            else:
                call.parts = [arguments if isinstance(arguments, str) else json.dumps(arguments)]
                self._end_call(call)


class OllamaGenerateParser(OllamaChatParser):
    """Parses an ``/api/generate`` NDJSON stream (``response``/``thinking``), FIM included."""

    def _on_content(self, payload: JsonObject) -> None:
        if thinking := text_of(payload.get("thinking")):
            self._emit(ThinkingDelta(thinking))
        if response := text_of(payload.get("response")):
            self._emit(TextDelta(response))


def build_continuation(
    body: dict[str, Any], turn: AssistantTurn, results: list[ToolResult]
) -> dict[str, Any]:
    """Build the next ``/api/chat`` body: the assistant message, then one tool message each.

    Tool call arguments stay JSON objects, as Ollama sends them.
    """
    assistant: dict[str, Any] = {"role": "assistant", "content": turn.text}
    thinking = "".join(block.thinking for block in turn.thinking if not block.redacted)
    if thinking:
        assistant["thinking"] = thinking
    if turn.tool_calls:
        calls: list[dict[str, Any]] = []
        for call in turn.tool_calls:
            entry: dict[str, Any] = {"function": {"name": call.name, "arguments": call.arguments}}
            if not is_synthetic_id(call.id):
                entry["id"] = call.id
            calls.append(entry)
        assistant["tool_calls"] = calls
    new_body = copy.deepcopy(body)
    messages = new_body.setdefault("messages", [])
    messages.append(assistant)
    for result in results:
        message: dict[str, Any] = {
            "role": "tool",
            "content": result.text(),
            "tool_name": result.name,
        }
        if not is_synthetic_id(result.tool_use_id):
            message["tool_call_id"] = result.tool_use_id
        messages.append(message)
    return new_body


def parse_model_list(payload: object) -> list[str]:
    """Model names from ``GET /api/tags`` (``models[].name``)."""
    models = obj(payload).get("models")
    if not isinstance(models, list):
        return []
    return [m["name"] for m in models if isinstance(m, dict) and isinstance(m.get("name"), str)]


def next_models_page(url: str, payload: object) -> str | None:
    """``/api/tags`` is not paginated."""
    return None
