"""OpenAI Responses API (``POST /v1/responses``): parser, tools, models.

SSE with ``event:`` names equal to the payload ``type`` and no ``[DONE]``; the stream ends
with ``response.completed``, ``response.incomplete`` or ``response.failed``. Function calls
are keyed by item id and identified to the model by ``call_id`` (the id we emit). Reasoning
summary deltas stream as thinking text; when a reasoning item finishes, its replayable form
(id, summary, encrypted content) is emitted as that block's opaque ``signature`` so the
next request can hand it back; an item with no readable summary is marked ``redacted``.
"""

from __future__ import annotations

import json
from typing import Any

from qodeassist_lsp.wire import openai_chat
from qodeassist_lsp.wire.errors import ErrorCategory
from qodeassist_lsp.wire.events import StopReason, TextDelta, ThinkingDelta
from qodeassist_lsp.wire.parser import (
    JsonObject,
    PendingCall,
    SSEParser,
    int_of,
    obj,
    text_of,
    usage_at,
)
from qodeassist_lsp.wire.tools import ToolSpec

parse_model_list = openai_chat.parse_model_list
next_models_page = openai_chat.next_models_page

_REASONING_KEYS = ("type", "id", "summary", "encrypted_content", "content")
_INCOMPLETE: dict[str, StopReason] = {
    "max_output_tokens": "max_tokens",
    "content_filter": "content_filter",
}
_USAGE = (
    "input_tokens",
    "output_tokens",
    "input_tokens_details.cached_tokens",
    "output_tokens_details.reasoning_tokens",
)


def _summary_text(item: JsonObject) -> str:
    parts = [text_of(obj(s).get("text")) for s in item.get("summary") or []]
    parts += [text_of(obj(c).get("text")) for c in item.get("content") or []]
    return "\n\n".join(p for p in parts if p)


class OpenAIResponsesParser(SSEParser):
    """Parses a Responses API SSE stream into wire events."""

    terminal_marker = "response.completed"

    def _init_state(self) -> None:
        super()._init_state()
        self._calls: dict[str, PendingCall] = {}
        self._streamed_text: set[tuple[str, int]] = set()
        self._reasoning_streamed: set[str] = set()
        self._emitted_anything = False
        self._refused = False

    def _on_payload(self, event: str, payload: JsonObject) -> None:
        kind = text_of(payload.get("type")) or event
        if kind == "error" or event == "error":
            self._fail_with_payload(payload)
        elif kind == "response.output_item.added":
            self._item_added(obj(payload.get("item")))
        elif kind in ("response.output_text.delta", "response.refusal.delta"):
            delta = text_of(payload.get("delta"))
            self._text(payload, delta, done=False, refusal=kind == "response.refusal.delta")
        elif kind in ("response.output_text.done", "response.refusal.done"):
            text = text_of(payload.get("text")) or text_of(payload.get("refusal"))
            self._text(payload, text, done=True)
        elif kind in (
            "response.reasoning_summary_text.delta",
            "response.reasoning_text.delta",
            "response.reasoning_content.delta",
        ):
            if delta := text_of(payload.get("delta")):
                self._reasoning_streamed.add(text_of(payload.get("item_id")))
                self._emit_seen(ThinkingDelta(delta))
        elif kind == "response.function_call_arguments.delta":
            call = self._calls.get(text_of(payload.get("item_id")))
            if call is not None:
                call.parts.append(text_of(payload.get("delta")))
        elif kind == "response.function_call_arguments.done":
            call = self._calls.get(text_of(payload.get("item_id")))
            if call is not None and isinstance(payload.get("arguments"), str):
                call.parts = [payload["arguments"]]
                self._end_call(call)
        elif kind == "response.output_item.done":
            self._item_done(obj(payload.get("item")))
        elif kind in ("response.completed", "response.incomplete"):
            self._terminal(obj(payload.get("response")))
        elif kind == "response.failed":
            self._failed(obj(payload.get("response")))

    def _emit_seen(self, event: TextDelta | ThinkingDelta) -> None:
        self._emitted_anything = True
        self._emit(event)

    def _item_added(self, item: JsonObject) -> None:
        if item.get("type") == "function_call":
            call = PendingCall(id=text_of(item.get("call_id")), name=text_of(item.get("name")))
            self._calls[text_of(item.get("id"))] = call
            self._emitted_anything = True
            self._start_call(call)

    def _text(self, payload: JsonObject, text: str, *, done: bool, refusal: bool = False) -> None:
        # A ``done`` event repeats the text of its part: emitted only if no delta carried it.
        key = (text_of(payload.get("item_id")), int_of(payload.get("content_index")))
        if text and not (done and key in self._streamed_text):
            self._streamed_text.add(key)
            self._refused = self._refused or refusal
            self._emit_seen(TextDelta(text))

    def _item_done(self, item: JsonObject) -> None:
        kind = item.get("type")
        item_id = text_of(item.get("id"))
        if kind == "function_call":
            call = self._calls.setdefault(
                item_id,
                PendingCall(id=text_of(item.get("call_id")), name=text_of(item.get("name"))),
            )
            if not call.ended:
                call.parts = [text_of(item.get("arguments"))]
                self._emitted_anything = True
                self._end_call(call)
        elif kind == "reasoning":
            summary = _summary_text(item)
            if summary and item_id not in self._reasoning_streamed:
                self._emit_seen(ThinkingDelta(summary))
            replay = {k: item[k] for k in _REASONING_KEYS if item.get(k) is not None}
            replay.setdefault("summary", [])
            self._emit_seen(
                ThinkingDelta("", json.dumps(replay, separators=(",", ":")), redacted=not summary)
            )
        elif kind == "message" and not self._emitted_anything:
            for part in item.get("content") or []:
                if text := text_of(obj(part).get("text")) or text_of(obj(part).get("refusal")):
                    self._emit_seen(TextDelta(text))

    def _terminal(self, response: JsonObject) -> None:
        if not self._emitted_anything:
            # Some servers put the whole answer only in the final response object.
            for item in response.get("output") or []:
                self._item_done(obj(item))
        for call in self._calls.values():
            self._end_call(call)
        if isinstance(response.get("usage"), dict):
            self._usage = usage_at(response["usage"], *_USAGE)
        status = text_of(response.get("status"))
        if status == "incomplete":
            raw = text_of(obj(response.get("incomplete_details")).get("reason"))
            self._finish(_INCOMPLETE.get(raw, "other"), raw or status)
            return
        self._finish("refusal" if self._refused else "end_turn", status or "completed")

    def _failed(self, response: JsonObject) -> None:
        error = obj(response.get("error"))
        if error:
            self._fail_with_payload({"error": error})
        else:
            what = "failed to produce a response. Try again."
            self._fail_as(ErrorCategory.PROVIDER, what, json.dumps(response)[:2000])

    def _on_document(self, payload: JsonObject) -> None:
        if payload.get("object") == "response":
            if payload.get("status") == "failed":
                self._failed(payload)
            else:
                self._terminal(payload)
            return
        super()._on_document(payload)


def tool_definitions(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Tools in the Responses shape: ``{type: function, name, description, parameters}``."""
    return [
        {"type": "function", "name": t.name, "description": t.description, "parameters": t.schema()}
        for t in tools
    ]
