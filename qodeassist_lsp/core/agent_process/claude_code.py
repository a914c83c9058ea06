"""``ClaudeCodeProvider``: Claude Code (``claude -p --output-format stream-json``) answers a chat.

Each turn starts the instance's ``command`` (its flags included, e.g. ``claude -p
--output-format stream-json --verbose``) with the latest user message on stdin; a chat that
already has a Claude Code session gets ``--resume <session_id>`` appended, so Claude Code keeps
its own conversation. Its output is one JSON message per line (the Agent SDK's message types):
``system``/``init`` names the session, ``assistant`` messages carry text, thinking and the tool
calls Claude Code runs itself, ``user`` messages carry their results, and ``result`` ends the run
with its usage (or the failure in Claude Code's own words). Claude Code decides its own tool
permissions (``--permission-mode``, ``--allowedTools`` in ``command``). Closing the stream (a
cancel) stops the process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import OrderedDict
from collections.abc import AsyncGenerator
from typing import Any, Protocol

from qodeassist_lsp.config.providers import ProviderInstance
from qodeassist_lsp.config.secrets import SecretsPort
from qodeassist_lsp.core.agent import PreparedRequest
from qodeassist_lsp.core.agent_process.base import (
    ProcessProvider,
    count_at,
    failure,
    prompt_of,
    start_process,
    stderr_tail,
    stop_process,
)
from qodeassist_lsp.core.request_host import RequestHost
from qodeassist_lsp.wire.events import (
    AgentToolCall,
    AgentToolResult,
    MessageStop,
    TextDelta,
    ThinkingDelta,
    Usage,
    WireEvent,
)

log = logging.getLogger("qodeassist.claude_code")

MAX_SESSIONS = 256
"""How many chats' Claude Code session ids are remembered (for ``--resume``)."""
_PERMISSIONS = {
    "Read": "read",
    "Glob": "read",
    "Grep": "read",
    "LS": "read",
    "WebFetch": "read",
    "WebSearch": "read",
    "TodoWrite": "read",
    "Edit": "write",
    "MultiEdit": "write",
    "Write": "write",
    "NotebookEdit": "write",
    "Bash": "execute",
}


class ClaudeCodeProvider(ProcessProvider):
    """Runs one Claude Code process per turn, resuming the chat's Claude Code session."""

    def __init__(self, instance: ProviderInstance, secrets: SecretsPort, **kwargs: Any) -> None:
        """Serve ``instance`` (see ``GenericProvider``)."""
        super().__init__(instance, secrets, **kwargs)
        self._sessions: OrderedDict[str, str] = OrderedDict()

    async def _turn(
        self, request: PreparedRequest, host: RequestHost
    ) -> AsyncGenerator[list[WireEvent], None]:
        """Start Claude Code for the latest message and translate its output as it comes."""
        text, earlier = prompt_of(request.body)
        session = self._sessions.get(host.scope)
        if session is None and earlier:
            text = f"The conversation so far:\n\n{earlier}\n\nThe user now says:\n\n{text}"
        resume = ("--resume", session) if session else ()
        process = await start_process(self.instance, host.cwd, resume)
        assert process.stdin is not None
        assert process.stdout is not None
        stderr: list[str] = []
        tail = asyncio.create_task(stderr_tail(process, stderr))
        reader = self.reader(host.scope)
        try:
            process.stdin.write(text.encode())
            with contextlib.suppress(ConnectionError):
                await process.stdin.drain()
            process.stdin.close()
            async for raw in process.stdout:
                events = reader.read(raw)
                if events:
                    yield events
                if reader.ended:
                    return
            code = await process.wait()
            detail = "\n".join(stderr[-10:])
            name = self.instance.name
            yield [
                failure(f"provider {name!r}: the program exited with code {code} mid-turn", detail)
            ]
        finally:
            await stop_process(process)
            tail.cancel()

    def reader(self, scope: str) -> LineReader:
        """Return the translator of one run's output lines for chat ``scope``."""
        return _Reader(self, scope)

    def remember(self, scope: str, session_id: str) -> None:
        """Keep ``session_id`` as the Claude Code session of chat ``scope``."""
        self._sessions[scope] = session_id
        self._sessions.move_to_end(scope)
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)


class LineReader(Protocol):
    """Translates the JSON lines of one run into wire events."""

    ended: bool
    """Whether the run's final line was read."""

    def read(self, raw: bytes) -> list[WireEvent]:
        """Return the events of one output line."""
        ...


class _Reader:
    """Translates Claude Code's stream-json lines of one run into wire events."""

    def __init__(self, provider: ClaudeCodeProvider, scope: str) -> None:
        self._provider = provider
        self._scope = scope
        self._names: dict[str, str] = {}
        self.ended = False

    def read(self, raw: bytes) -> list[WireEvent]:
        """Return the events of one output line (none for lines that are not JSON objects)."""
        try:
            message = json.loads(raw)
        except ValueError:
            log.debug("not stream-json: %r", raw[:200])
            return []
        if not isinstance(message, dict):
            return []
        session = message.get("session_id")
        if isinstance(session, str) and session:
            self._provider.remember(self._scope, session)
        kind = message.get("type")
        if kind == "assistant":
            return self._assistant(_blocks(message))
        if kind == "user":
            return self._results(_blocks(message))
        if kind == "result":
            self.ended = True
            return _result(message, self._provider.instance.name)
        return []

    def _assistant(self, blocks: list[dict[str, Any]]) -> list[WireEvent]:
        events: list[WireEvent] = []
        for block in blocks:
            kind = block.get("type")
            if kind == "text" and block.get("text"):
                events.append(TextDelta(str(block["text"])))
            elif kind == "thinking" and block.get("thinking"):
                events.append(
                    ThinkingDelta(str(block["thinking"]), str(block.get("signature", "")))
                )
            elif kind == "tool_use":
                call_id, name = str(block.get("id", "")), str(block.get("name", "tool"))
                self._names[call_id] = name
                arguments = block.get("input")
                arguments = arguments if isinstance(arguments, dict) else {}
                events.append(AgentToolCall(call_id, name, arguments, _PERMISSIONS.get(name, "")))
        return events

    def _results(self, blocks: list[dict[str, Any]]) -> list[WireEvent]:
        events: list[WireEvent] = []
        for block in blocks:
            if block.get("type") == "tool_result":
                call_id = str(block.get("tool_use_id", ""))
                name = self._names.get(call_id, "tool")
                content = _text(block.get("content"))
                events.append(AgentToolResult(call_id, name, content, bool(block.get("is_error"))))
        return events


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    inner = message.get("message")
    content = inner.get("content") if isinstance(inner, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def _result(message: dict[str, Any], name: str) -> list[WireEvent]:
    """Return the usage and the end of a run from its ``result`` message."""
    events: list[WireEvent] = []
    usage = message.get("usage")
    if isinstance(usage, dict):
        events.append(
            Usage(
                input_tokens=count_at(usage, "input_tokens"),
                output_tokens=count_at(usage, "output_tokens"),
                cached_tokens=count_at(usage, "cache_read_input_tokens"),
            )
        )
    subtype = str(message.get("subtype", ""))
    if message.get("is_error") or (subtype and subtype != "success"):
        said = message.get("result")
        words = said.strip() if isinstance(said, str) and said.strip() else subtype or "failed"
        events.append(failure(f"provider {name!r}: Claude Code: {words}"))
        return events
    events.append(MessageStop("end_turn", subtype))
    return events
