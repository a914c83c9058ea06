"""Google Gemini ``streamGenerateContent``: parser, tools, models.

Two framings carry the same chunks: SSE (``?alt=sse``, events split by CRLF CRLF, no end
marker) and, without ``alt``, one JSON array streamed element by element; the parser tells
them apart by the first byte. Usage is a running snapshot on every chunk (the last wins).
Function calls arrive whole, usually without an id (one is made up). ``thoughtSignature``
is kept byte for byte: on a function call it rides on `ToolCallEnd`, elsewhere it closes the
current thinking block. The reply is complete at the chunk carrying ``finishReason``.
"""

from __future__ import annotations

import json
from typing import Any

from qodeassist_lsp.wire.errors import ErrorCategory
from qodeassist_lsp.wire.events import StopReason, ThinkingDelta
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
from qodeassist_lsp.wire.urls import with_query_param

UNSUPPORTED_SCHEMA_KEYS = frozenset(
    {
        "$schema",
        "$id",
        "$ref",
        "$defs",
        "definitions",
        "additionalProperties",
        "patternProperties",
        "unevaluatedProperties",
        "dependencies",
        "dependentSchemas",
        "dependentRequired",
        "allOf",
        "oneOf",
        "not",
        "const",
    }
)

_STOP: dict[str, StopReason] = {
    "STOP": "end_turn",
    "MAX_TOKENS": "max_tokens",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "IMAGE_PROHIBITED_CONTENT": "content_filter",
}
_BAD_CALL = frozenset({"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"})
_USAGE = (
    "promptTokenCount",
    "candidatesTokenCount",
    "cachedContentTokenCount",
    "thoughtsTokenCount",
)


class GoogleParser(SSEParser):
    """Parses a Gemini stream (SSE or streamed JSON array) into wire events."""

    terminal_marker = "a finishReason"

    def _on_payload(self, event: str, payload: JsonObject) -> None:
        self._on_chunk(payload)

    def _on_document(self, payload: JsonObject) -> None:
        self._on_chunk(payload)

    def _on_chunk(self, chunk: JsonObject) -> None:
        if chunk.get("error"):
            self._fail_with_payload(chunk)
            return
        if usage := obj(chunk.get("usageMetadata")):
            self._usage = usage_at(usage, *_USAGE)
        candidates = chunk.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            blocked = text_of(obj(chunk.get("promptFeedback")).get("blockReason"))
            if blocked:
                what = f"blocked the prompt ({blocked}). Rephrase it or remove the flagged content."
                self._fail_as(ErrorCategory.VALIDATION, what, str(chunk.get("promptFeedback")))
            return
        candidate = next(
            (obj(c) for c in candidates if int_of(obj(c).get("index")) == 0), obj(candidates[0])
        )
        for part in obj(candidate.get("content")).get("parts") or []:
            self._on_part(obj(part))
        finish = text_of(candidate.get("finishReason"))
        if finish:
            self._on_finish(finish, text_of(candidate.get("finishMessage")))

    def _on_part(self, part: JsonObject) -> None:
        signature = text_of(part.get("thoughtSignature")) or text_of(part.get("signature"))
        if "functionCall" in part:
            call_data = obj(part.get("functionCall"))
            call = PendingCall(id=text_of(call_data.get("id")), name=text_of(call_data.get("name")))
            args = call_data.get("args")
            if isinstance(args, dict):
                self._end_call(call, arguments=args, signature=signature)
            else:
                call.parts = [] if args is None else [json.dumps(args)]
                self._end_call(call, signature=signature)
            return
        text = text_of(part.get("text"))
        if part.get("thought") is True:
            if text or signature:
                self._emit(ThinkingDelta(text, signature))
            return
        if signature:
            self._emit(ThinkingDelta("", signature))
        self._emit_text(text)

    def _on_finish(self, finish: str, message: str) -> None:
        if finish in _BAD_CALL:
            what = f"could not produce a valid function call ({finish}). Try again or simplify "
            self._fail_as(ErrorCategory.TOOL, what + "the tools' parameters.", message or finish)
            return
        self._finish(stop_reason(_STOP, finish), finish)

    def _at_eof(self) -> None:
        if self._json is not None and self._json.complete:
            # A whole array without a finishReason (e.g. an empty reply) is still complete.
            self._finish("end_turn", "")
        else:
            super()._at_eof()


def _clean_schema(schema: object) -> object:
    if isinstance(schema, list):
        return [_clean_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    cleaned: dict[str, Any] = {}
    for key, value in schema.items():
        if key in UNSUPPORTED_SCHEMA_KEYS:
            continue
        if key == "properties" and isinstance(value, dict):
            # Property names are data, not keywords: never strip them, only clean their schemas.
            cleaned[key] = {name: _clean_schema(sub) for name, sub in value.items()}
        elif key in ("items", "anyOf", "prefixItems"):
            cleaned[key] = _clean_schema(value)
        else:
            cleaned[key] = value
    return cleaned


def tool_definitions(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Tools as one ``function_declarations`` entry, schemas stripped of keys Gemini rejects."""
    if not tools:
        return []
    declarations = [
        {"name": t.name, "description": t.description, "parameters": _clean_schema(t.schema())}
        for t in tools
    ]
    return [{"function_declarations": declarations}]


def parse_model_list(payload: object) -> list[str]:
    """Model ids (without ``models/``) from ``GET /models`` that can generate content."""
    models = obj(payload).get("models")
    ids: list[str] = []
    for model in models if isinstance(models, list) else []:
        model = obj(model)
        name = text_of(model.get("name"))
        methods = model.get("supportedGenerationMethods")
        if not name or (isinstance(methods, list) and "generateContent" not in methods):
            continue
        ids.append(name.removeprefix("models/"))
    return ids


def next_models_page(url: str, payload: object) -> str | None:
    """Return the URL of the next page of models, from ``nextPageToken``."""
    token = obj(payload).get("nextPageToken")
    return with_query_param(url, "pageToken", token) if isinstance(token, str) and token else None
