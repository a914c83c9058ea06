"""OpenAI Chat Completions and every server that copies it: parser, tools, models.

One parser covers OpenAI, Mistral/Codestral (chat and FIM), OpenRouter, Groq, LM Studio,
DeepSeek/Qwen, Ollama's and llama.cpp's ``/v1`` endpoints; Mistral and llama.cpp use this
module's tool and model-list shapes too. What varies between them and is
handled here: reasoning as ``reasoning_content`` / ``reasoning`` / ``reasoning_details``
(emitted as deltas, never as growing snapshots), Magistral's content arrays, tool-call
fragments with or without ``index``/``id``, usage on the finish chunk or on a later
``choices: []`` chunk, errors as a top-level ``error`` (plain, in a named ``error`` event, or
on llama.cpp's legacy ``error:`` field), and EOF without ``[DONE]`` (complete only if a
``finish_reason`` arrived). A refusal streams as text and stops with ``refusal``.
`OpenAICompletionsParser` reads the legacy ``/v1/completions`` ``choices[].text`` chunks.
"""

from __future__ import annotations

import json
from typing import Any

from qodeassist_lsp.wire.errors import ErrorCategory
from qodeassist_lsp.wire.events import StopReason, TextDelta
from qodeassist_lsp.wire.parser import (
    JsonObject,
    PendingCall,
    SSEParser,
    int_of,
    obj,
    stop_reason,
    text_of,
    usage_at,
)
from qodeassist_lsp.wire.tools import ToolSpec

_STOP: dict[str, StopReason] = {
    "stop": "end_turn",
    "eos": "end_turn",
    "end_turn": "end_turn",
    "length": "max_tokens",
    "model_length": "max_tokens",
    "max_tokens": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "content_filter",
}

_USAGE = (
    "prompt_tokens",
    "completion_tokens",
    "prompt_tokens_details.cached_tokens",
    "completion_tokens_details.reasoning_tokens",
)


def _reasoning_text(delta: JsonObject) -> str:
    # Servers that send several of these carry the same text in each; take one.
    for key in ("reasoning_content", "reasoning"):
        if isinstance(delta.get(key), str):
            return text_of(delta.get(key))
    details = delta.get("reasoning_details")
    if isinstance(details, list):
        return "".join(
            text_of(obj(d).get("text")) or text_of(obj(d).get("summary")) for d in details
        )
    return ""


def _thinking_text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(text_of(obj(part).get("text")) for part in value)
    return ""


class OpenAIChatParser(SSEParser):
    """Parses a Chat Completions SSE stream (choice index 0) into wire events."""

    terminal_marker = "data: [DONE]"
    data_fields = frozenset({"error"})

    def _init_state(self) -> None:
        super()._init_state()
        self._calls: dict[tuple[str, object], PendingCall] = {}
        self._last_key: tuple[str, object] | None = None
        self._finish_raw: str | None = None
        self._refused = False

    def _on_payload(self, event: str, payload: JsonObject) -> None:
        if event == "error" or payload.get("error"):
            self._fail_with_payload(payload)
            return
        if isinstance(payload.get("usage"), dict):
            self._usage = usage_at(payload["usage"], *_USAGE)
        choices = payload.get("choices")
        for choice in choices if isinstance(choices, list) else []:
            choice = obj(choice)
            if int_of(choice.get("index")) == 0:
                self._on_choice(choice)

    def _on_choice(self, choice: JsonObject) -> None:
        self._on_delta(obj(choice.get("delta") or choice.get("message")))
        finish = choice.get("finish_reason")
        if isinstance(finish, str) and finish:
            self._on_finish_reason(finish)

    def _on_delta(self, delta: JsonObject) -> None:
        self._emit_text(_reasoning_text(delta), thinking=True)
        content = delta.get("content")
        # Magistral: [{"type": "thinking", "thinking": [...]}, {"type": "text", ...}].
        for part in content if isinstance(content, list) else [{"text": content}]:
            part = obj(part)
            if part.get("type") == "thinking":
                self._emit_text(_thinking_text(part.get("thinking")), thinking=True)
            else:
                self._emit_text(part.get("text"))
        if refusal := text_of(delta.get("refusal")):
            self._refused = True
            self._emit(TextDelta(refusal))
        tool_calls = delta.get("tool_calls")
        for fragment in tool_calls if isinstance(tool_calls, list) else []:
            self._on_tool_fragment(obj(fragment))

    def _on_tool_fragment(self, fragment: JsonObject) -> None:
        function = obj(fragment.get("function"))
        call_id = text_of(fragment.get("id"))
        name = text_of(function.get("name"))
        key: tuple[str, object]
        if isinstance(fragment.get("index"), int):
            key = ("index", fragment["index"])
        elif call_id:
            key = ("id", call_id)
        elif name or self._last_key is None:
            # Mistral sends whole calls without index or id: each named fragment is a new call.
            key = ("position", len(self._calls))
        else:
            key = self._last_key
        self._last_key = key
        call = self._calls.setdefault(key, PendingCall())
        call.id = call.id or call_id
        call.name = call.name or name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            call.parts.append(arguments)
        elif isinstance(arguments, dict):
            call.parts = [json.dumps(arguments)]
        if call.name:
            self._start_call(call)

    def _on_finish_reason(self, finish: str) -> None:
        self._finish_raw = finish
        if finish == "error":
            what = "stopped the reply with an error. Try again."
            self._fail_as(ErrorCategory.PROVIDER, what, "finish_reason: error")
            return
        self._close_calls(cut_off=stop_reason(_STOP, finish) == "max_tokens")

    def _close_calls(self, *, cut_off: bool) -> None:
        for call in self._calls.values():
            self._end_call(call, cut_off=cut_off)

    def _complete(self) -> None:
        raw = self._finish_raw or ""
        self._close_calls(cut_off=False)
        reason = stop_reason(_STOP, raw)
        if self._refused and reason == "end_turn":
            reason = "refusal"
        self._finish(reason, raw)

    def _on_done(self) -> None:
        self._complete()

    def _at_eof(self) -> None:
        if self._finish_raw is not None:
            self._complete()
        else:
            super()._at_eof()

    def _on_document(self, payload: JsonObject) -> None:
        if payload.get("error") or "choices" not in payload:
            super()._on_document(payload)
            return
        self._on_payload("", payload)
        self._complete()


class OpenAICompletionsParser(OpenAIChatParser):
    """Parses legacy ``/v1/completions`` streams, whose choices carry ``text``."""

    def _on_choice(self, choice: JsonObject) -> None:
        self._emit_text(choice.get("text"))
        super()._on_choice(choice)


def tool_definitions(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Tools in the Chat Completions shape: ``{type: function, function: {…}}``."""
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.schema()},
        }
        for t in tools
    ]


def parse_model_list(payload: object) -> list[str]:
    """Model ids from ``GET /v1/models`` (``data[].id``; a bare array of cards also works)."""
    data = payload if isinstance(payload, list) else obj(payload).get("data")
    if not isinstance(data, list):
        return []
    return [m["id"] for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]


def next_models_page(url: str, payload: object) -> str | None:
    """OpenAI-style model lists are not paginated."""
    return None
