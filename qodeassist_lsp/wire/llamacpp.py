"""llama.cpp ``llama-server``: native ``/completion`` and ``/infill`` streams.

The native endpoints stream data-only SSE of ``{content, stop}`` objects with no
``[DONE]``; the event with ``"stop": true`` is a summary that ends the reply (EOF before it
means the stream was cut). Older servers report mid-stream failures on a non-standard
``error:`` SSE field, newer ones as ``data: {"error": …}``; both are handled. The
OpenAI-compatible endpoints (``/v1/chat/completions``, ``/v1/completions``) are parsed by
`qodeassist_lsp.wire.openai_chat`, and tools and continuation use its shapes.
"""

from __future__ import annotations

from qodeassist_lsp.wire import openai_chat
from qodeassist_lsp.wire.events import StopReason, TextDelta, Usage
from qodeassist_lsp.wire.parser import JsonObject, SSEParser, int_of, obj, text_of

tool_definitions = openai_chat.tool_definitions
build_continuation = openai_chat.build_continuation
parse_model_list = openai_chat.parse_model_list
next_models_page = openai_chat.next_models_page

_STOP: dict[str, StopReason] = {
    "eos": "end_turn",
    "limit": "max_tokens",
    "word": "stop_sequence",
}


def normalise_stop(raw: str) -> StopReason:
    """Map a native ``stop_type`` onto the shared vocabulary."""
    return _STOP.get(raw, "other") if raw else "end_turn"


class LlamaCppNativeParser(SSEParser):
    """Parses a native ``/completion`` or ``/infill`` stream into wire events."""

    terminal_marker = 'an event with "stop": true'
    data_fields = frozenset({"error"})

    def _on_payload(self, event: str, payload: JsonObject) -> None:
        if event == "error" or payload.get("error"):
            self._fail_with_payload(payload if payload.get("error") else {"error": payload})
            return
        if content := text_of(payload.get("content")):
            self._emit(TextDelta(content))
        if payload.get("stop") is True:
            cached = payload.get("tokens_cached")
            self._usage = Usage(
                input_tokens=int_of(payload.get("tokens_evaluated")),
                output_tokens=int_of(payload.get("tokens_predicted")),
                cached_tokens=int_of(cached) or int_of(obj(payload.get("timings")).get("cache_n")),
            )
            raw = text_of(payload.get("stop_type"))
            self._finish(normalise_stop(raw), raw)

    def _on_document(self, payload: JsonObject) -> None:
        if payload.get("error") or "content" not in payload:
            super()._on_document(payload)
            return
        self._on_payload("", payload)
