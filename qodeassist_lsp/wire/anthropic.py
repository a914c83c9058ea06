"""Anthropic Messages API (``POST /v1/messages``): stream parser, tools, models.

The stream is SSE with ``event:`` names equal to the payload ``type``; state is keyed by
content block ``index``. Thinking deltas stream as they come and the block's
``signature_delta`` closes it; ``redacted_thinking`` arrives whole. Tool input JSON is
concatenated per block and parsed when the block stops, or when ``message_delta`` arrives
first (a reply cut at ``max_tokens`` never stops its open tool block). Server-side tools
(``server_tool_use``, ``web_search_tool_result``) run at Anthropic and produce no events.
"""

from __future__ import annotations

from typing import Any

from qodeassist_lsp.wire import openai_chat
from qodeassist_lsp.wire.events import StopReason, ThinkingDelta
from qodeassist_lsp.wire.parser import (
    JsonObject,
    PendingCall,
    SSEParser,
    obj,
    stop_reason,
    text_of,
    usage_at,
)
from qodeassist_lsp.wire.tools import ToolSpec
from qodeassist_lsp.wire.urls import with_query_param

_STOP: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "tool_use": "tool_use",
    "pause_turn": "pause_turn",
    "refusal": "refusal",
    "model_context_window_exceeded": "max_tokens",
}
_USAGE = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "output_tokens_details.thinking_tokens",
)


class AnthropicParser(SSEParser):
    """Parses an Anthropic Messages SSE stream into wire events."""

    terminal_marker = "message_stop"

    def _init_state(self) -> None:
        super()._init_state()
        self._tool_blocks: dict[int, PendingCall] = {}
        self._usage_fields: JsonObject = {}
        self._stop_raw = ""

    def _on_payload(self, event: str, payload: JsonObject) -> None:
        kind = text_of(payload.get("type")) or event
        if kind == "error" or event == "error":
            self._fail_with_payload(payload)
        elif kind == "message_start":
            self._merge_usage(obj(obj(payload.get("message")).get("usage")))
        elif kind == "content_block_start":
            self._block_start(payload.get("index"), obj(payload.get("content_block")))
        elif kind == "content_block_delta":
            self._block_delta(payload.get("index"), obj(payload.get("delta")))
        elif kind == "content_block_stop":
            index = payload.get("index")
            call = self._tool_blocks.pop(index, None) if isinstance(index, int) else None
            if call is not None:
                self._end_call(call)
        elif kind == "message_delta":
            self._stop_raw = text_of(obj(payload.get("delta")).get("stop_reason"))
            self._merge_usage(obj(payload.get("usage")))
            self._close_open_blocks()
        elif kind == "message_stop":
            self._close_open_blocks()
            self._finish(stop_reason(_STOP, self._stop_raw), self._stop_raw)

    def _block_start(self, index: object, block: JsonObject) -> None:
        kind = block.get("type")
        if kind == "text":
            self._emit_text(block.get("text"))
        elif kind == "thinking":
            self._emit_text(block.get("thinking"), thinking=True)
        elif kind == "redacted_thinking":
            self._emit(ThinkingDelta("", text_of(block.get("data")), redacted=True))
        elif kind == "tool_use" and isinstance(index, int):
            call = PendingCall(id=text_of(block.get("id")), name=text_of(block.get("name")))
            self._tool_blocks[index] = call
            self._start_call(call)

    def _block_delta(self, index: object, delta: JsonObject) -> None:
        kind = delta.get("type")
        if kind == "text_delta":
            self._emit_text(delta.get("text"))
        elif kind == "thinking_delta":
            self._emit_text(delta.get("thinking"), thinking=True)
        elif kind == "signature_delta":
            self._emit(ThinkingDelta("", text_of(delta.get("signature"))))
        elif kind == "input_json_delta" and isinstance(index, int) and index in self._tool_blocks:
            self._tool_blocks[index].parts.append(text_of(delta.get("partial_json")))

    def _close_open_blocks(self) -> None:
        cut_off = self._stop_raw == "max_tokens"
        for call in self._tool_blocks.values():
            self._end_call(call, cut_off=cut_off)
        self._tool_blocks.clear()

    def _merge_usage(self, usage: JsonObject) -> None:
        if not usage:
            return
        # message_delta usage is cumulative and wins over message_start's.
        self._usage_fields.update({k: v for k, v in usage.items() if v is not None})
        self._usage = usage_at(self._usage_fields, *_USAGE)

    def _on_document(self, payload: JsonObject) -> None:
        if payload.get("type") != "message":
            super()._on_document(payload)
            return
        for index, block in enumerate(payload.get("content") or []):
            block = obj(block)
            if block.get("type") == "thinking":
                self._emit(ThinkingDelta(text_of(block.get("thinking"))))
                self._emit(ThinkingDelta("", text_of(block.get("signature"))))
            elif block.get("type") == "tool_use":
                call = PendingCall(id=text_of(block.get("id")), name=text_of(block.get("name")))
                self._end_call(call, arguments=obj(block.get("input")))
            else:
                self._block_start(index, block)
        self._stop_raw = text_of(payload.get("stop_reason"))
        self._merge_usage(obj(payload.get("usage")))
        self._finish(stop_reason(_STOP, self._stop_raw), self._stop_raw)


def tool_definitions(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Tools in the Messages API shape: ``{name, description, input_schema}``."""
    return [
        {"name": t.name, "description": t.description, "input_schema": t.schema()} for t in tools
    ]


parse_model_list = openai_chat.parse_model_list


def next_models_page(url: str, payload: object) -> str | None:
    """Return the URL of the next page of models when ``has_more`` says there is one."""
    page = obj(payload)
    last_id = page.get("last_id")
    if page.get("has_more") is True and isinstance(last_id, str) and last_id:
        return with_query_param(url, "after_id", last_id)
    return None
