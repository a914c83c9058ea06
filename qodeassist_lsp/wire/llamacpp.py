"""llama.cpp ``llama-server``: native ``/completion`` and ``/infill`` streams.

The native endpoints stream data-only SSE of ``{content, stop}`` objects with no
``[DONE]``; the event with ``"stop": true`` is a summary that ends the reply (EOF before it
means the stream was cut). Older servers report mid-stream failures on a non-standard
``error:`` SSE field, newer ones as ``data: {"error": …}``; both are handled. The
OpenAI-compatible endpoints (``/v1/chat/completions``, ``/v1/completions``) are parsed by
`qodeassist_lsp.wire.openai_chat`, whose tool and model-list shapes llama.cpp uses.
"""

from __future__ import annotations

from qodeassist_lsp.wire.events import StopReason, Usage
from qodeassist_lsp.wire.parser import JsonObject, SSEParser, int_of, obj, stop_reason, text_of

_STOP: dict[str, StopReason] = {
    "eos": "end_turn",
    "limit": "max_tokens",
    "word": "stop_sequence",
}


class LlamaCppNativeParser(SSEParser):
    """Parses a native ``/completion`` or ``/infill`` stream into wire events."""

    terminal_marker = 'an event with "stop": true'
    data_fields = frozenset({"error"})

    def _on_payload(self, event: str, payload: JsonObject) -> None:
        if event == "error" or payload.get("error"):
            self._fail_with_payload(payload if payload.get("error") else {"error": payload})
            return
        self._emit_text(payload.get("content"))
        if payload.get("stop") is True:
            cached = payload.get("tokens_cached")
            self._usage = Usage(
                input_tokens=int_of(payload.get("tokens_evaluated")),
                output_tokens=int_of(payload.get("tokens_predicted")),
                cached_tokens=int_of(cached) or int_of(obj(payload.get("timings")).get("cache_n")),
            )
            raw = text_of(payload.get("stop_type"))
            self._finish(stop_reason(_STOP, raw), raw)

    def _on_document(self, payload: JsonObject) -> None:
        if payload.get("error") or "content" not in payload:
            super()._on_document(payload)
            return
        self._on_payload("", payload)
