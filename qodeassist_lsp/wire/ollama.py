"""Ollama's native API (``/api/chat``, ``/api/generate``, ``/api/tags``).

The stream is NDJSON: one compact object per line, ``error`` checked first on every line,
the line with ``"done": true`` ends it (EOF before that means it was cut). Tool calls arrive
whole with ``arguments`` as an object, usually without an id (one is made up); the stop
reason stays ``stop``, so a reply with tool calls is normalised to ``tool_use``. A
non-streamed reply is one line and parses the same way. Ollama's OpenAI-compatible ``/v1``
endpoints are handled by `qodeassist_lsp.wire.openai_chat`.
"""

from __future__ import annotations

import json

from qodeassist_lsp.wire import openai_chat
from qodeassist_lsp.wire.events import StopReason
from qodeassist_lsp.wire.parser import (
    JsonObject,
    NDJSONParser,
    PendingCall,
    obj,
    stop_reason,
    text_of,
    usage_at,
)

_STOP: dict[str, StopReason] = {"stop": "end_turn", "length": "max_tokens"}  # load, unload: other

tool_definitions = openai_chat.tool_definitions


class OllamaChatParser(NDJSONParser):
    """Parses an ``/api/chat`` NDJSON stream (``message.content``/``thinking``/``tool_calls``)."""

    terminal_marker = '"done": true'

    def _on_payload(self, payload: JsonObject) -> None:
        self._on_content(payload)
        if payload.get("done") is True:
            if "eval_count" in payload or "prompt_eval_count" in payload:
                # The counters are omitempty: a fully cached prompt has no prompt_eval_count.
                self._usage = usage_at(payload, "prompt_eval_count", "eval_count")
            raw = text_of(payload.get("done_reason"))
            self._finish(stop_reason(_STOP, raw), raw)

    def _on_content(self, payload: JsonObject) -> None:
        message = obj(payload.get("message"))
        self._emit_text(message.get("thinking"), thinking=True)
        self._emit_text(message.get("content"))
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
        self._emit_text(payload.get("thinking"), thinking=True)
        self._emit_text(payload.get("response"))


def parse_model_list(payload: object) -> list[str]:
    """Model names from ``GET /api/tags`` (``models[].name``)."""
    models = obj(payload).get("models")
    if not isinstance(models, list):
        return []
    return [m["name"] for m in models if isinstance(m, dict) and isinstance(m.get("name"), str)]


def next_models_page(url: str, payload: object) -> str | None:
    """``/api/tags`` is not paginated."""
    return None
