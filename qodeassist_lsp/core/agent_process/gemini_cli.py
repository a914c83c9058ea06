"""``GeminiCliProvider``: Gemini CLI's headless ``--output-format stream-json`` answers a chat.

The same shape as Claude Code (one run per message, the message on stdin, a process group
stopped on cancel), with Gemini CLI's JSONL events (its headless-mode reference): ``init``,
``message`` (assistant text, ``delta`` chunks), ``tool_use``/``tool_result`` (the tools it runs
itself), ``error`` (a non-fatal warning, logged) and ``result`` (``status`` and ``stats`` with
token counts). Runs are not resumed: every run gets the conversation so far with the message.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from qodeassist_lsp.core.agent_process.base import count_at, failure
from qodeassist_lsp.core.agent_process.claude_code import ClaudeCodeProvider, LineReader
from qodeassist_lsp.wire.events import (
    AgentToolCall,
    AgentToolResult,
    MessageStop,
    TextDelta,
    Usage,
    WireEvent,
)

log = logging.getLogger("qodeassist.gemini_cli")

_PERMISSIONS = {
    "read_file": "read",
    "read_many_files": "read",
    "list_directory": "read",
    "glob": "read",
    "search_file_content": "read",
    "google_web_search": "read",
    "web_fetch": "read",
    "write_file": "write",
    "replace": "write",
    "run_shell_command": "execute",
}


class GeminiCliProvider(ClaudeCodeProvider):
    """Runs one Gemini CLI process per message."""

    def reader(self, scope: str) -> LineReader:
        """Return the translator of Gemini CLI's stream-json lines."""
        return GeminiReader(self.instance.name)

    def remember(self, scope: str, session_id: str) -> None:
        """Keep nothing: Gemini CLI runs are not resumed."""


class GeminiReader:
    """Translates the stream-json lines of one Gemini CLI run into wire events."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._names: dict[str, str] = {}
        self.ended = False

    def read(self, raw: bytes) -> list[WireEvent]:
        """Return the events of one output line (none for lines that are not JSON objects)."""
        try:
            event = json.loads(raw)
        except ValueError:
            return []
        if not isinstance(event, dict):
            return []
        kind = event.get("type")
        if kind == "message" and event.get("role") == "assistant" and event.get("content"):
            return [TextDelta(str(event["content"]))]
        if kind == "tool_use":
            call_id, name = str(event.get("tool_id", "")), str(event.get("tool_name", "tool"))
            self._names[call_id] = name
            arguments = event.get("parameters")
            arguments = arguments if isinstance(arguments, dict) else {}
            return [AgentToolCall(call_id, name, arguments, _PERMISSIONS.get(name, ""))]
        if kind == "tool_result":
            call_id = str(event.get("tool_id", ""))
            output = event.get("output")
            text = output if isinstance(output, str) else _message(event.get("error"))
            is_error = event.get("status") == "error"
            return [AgentToolResult(call_id, self._names.get(call_id, "tool"), text, is_error)]
        if kind == "error":
            log.warning("%s: %s", self._name, _message(event) or event)
            return []
        if kind == "result":
            self.ended = True
            return self._result(event)
        return []

    def _result(self, event: dict[str, Any]) -> list[WireEvent]:
        events: list[WireEvent] = []
        stats = event.get("stats")
        if isinstance(stats, dict):
            events.append(Usage(count_at(stats, "input_tokens"), count_at(stats, "output_tokens")))
        if event.get("status") not in (None, "success"):
            words = _message(event.get("error")) or str(event.get("status"))
            events.append(failure(f"provider {self._name!r}: Gemini CLI: {words}"))
            return events
        events.append(MessageStop("end_turn"))
        return events


def _message(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message", ""))
    return error if isinstance(error, str) else ""
