"""``AcpClient``: our side of an ACP agent's requests while it answers a chat.

The agent's ``session/update`` notifications become typed wire events on a queue (text,
thinking, its own tool calls and their results); its ``session/request_permission`` goes through
the session's permission gate (the ``[tools.permissions]`` policy and the same client prompt as
our own tools); its ``fs/read_text_file`` and ``fs/write_text_file`` are served confined to the
workspace. Terminals are not offered (the capability is not declared).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
    WriteTextFileResponse,
)

from qodeassist_lsp.config.confinement import PathRefused
from qodeassist_lsp.core.request_host import RequestHost
from qodeassist_lsp.core.tools import PermissionClass, ToolContext, ToolOutput
from qodeassist_lsp.wire.events import (
    AgentToolCall,
    AgentToolResult,
    TextDelta,
    ThinkingDelta,
    WireEvent,
)
from qodeassist_lsp.wire.tools import ToolSpec

_PERMISSION_OF_KIND: dict[str, PermissionClass] = {
    "read": "read",
    "search": "read",
    "think": "read",
    "fetch": "read",
    "edit": "write",
    "delete": "write",
    "move": "write",
}


def permission_of(kind: str | None) -> PermissionClass:
    """Return our permission class of an ACP tool ``kind`` (unknown kinds count as execute)."""
    return _PERMISSION_OF_KIND.get(kind or "", "execute")


@dataclass(frozen=True)
class AgentTool:
    """An agent's tool call as the permission gate sees it (never run by us)."""

    spec: ToolSpec
    permission: PermissionClass

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        """Not used: the agent runs its own tools."""
        raise NotImplementedError


def _text(content: Any) -> str:
    """Return the text of a content block, of a tool-call content item or of a list of them."""
    if isinstance(content, list):
        return "".join(_text(item) for item in content)
    inner = getattr(content, "content", None)
    if inner is not None and not isinstance(content, str):
        return _text(inner)
    text = getattr(content, "text", None)
    return text if isinstance(text, str) else ""


class AcpClient:
    """Implements ``acp.Client`` for one agent process; serves the request of the moment."""

    def __init__(self) -> None:
        self.host: RequestHost | None = None
        self.queue: asyncio.Queue[list[WireEvent]] = asyncio.Queue()
        self._titles: dict[str, str] = {}

    def begin(self, host: RequestHost) -> None:
        """Serve ``host``'s request from now on, with an empty queue."""
        self.host = host
        self.queue = asyncio.Queue()

    def end(self) -> None:
        """Stop serving: later updates are dropped, later requests refused."""
        self.host = None

    def on_connect(self, conn: Any) -> None:
        """Nothing to keep: the provider holds the connection."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """Turn one update into wire events for the running turn."""
        events = self._events(update)
        if events and self.host is not None:
            self.queue.put_nowait(events)

    def _events(self, update: Any) -> list[WireEvent]:
        if isinstance(update, AgentMessageChunk):
            text = _text(update.content)
            return [TextDelta(text)] if text else []
        if isinstance(update, AgentThoughtChunk):
            text = _text(update.content)
            return [ThinkingDelta(text)] if text else []
        if isinstance(update, ToolCallStart):
            title = self._titles[update.tool_call_id] = update.title or update.tool_call_id
            arguments = update.raw_input if isinstance(update.raw_input, dict) else {}
            events: list[WireEvent] = [
                AgentToolCall(update.tool_call_id, title, arguments, permission_of(update.kind))
            ]
            return events + self._result(update.tool_call_id, update.status, update)
        if isinstance(update, ToolCallProgress):
            return self._result(update.tool_call_id, update.status, update)
        return []

    def _result(self, call_id: str, status: str | None, update: Any) -> list[WireEvent]:
        if status not in ("completed", "failed"):
            return []
        content = _text(update.content or []) or _raw(update.raw_output)
        name = self._titles.get(call_id, call_id)
        return [AgentToolResult(call_id, name, content, status == "failed")]

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        """Decide by our permission policy (asking the user as for our own tools)."""
        host = self.host
        refusal: str | None = "no chat is being answered"
        if host is not None:
            title = tool_call.title or self._titles.get(tool_call.tool_call_id, "a tool")
            tool = AgentTool(ToolSpec(title, ""), permission_of(tool_call.kind))
            arguments = tool_call.raw_input if isinstance(tool_call.raw_input, dict) else {}
            context = ToolContext(host.scope, host.request_id, tool_call.tool_call_id, host.emit)
            gate = host.tools.gate
            refusal = await gate.check(tool, arguments, context) if gate is not None else None
        wanted = (
            ("allow_once", "allow_always") if refusal is None else ("reject_once", "reject_always")
        )
        for kind in wanted:
            for option in options:
                if option.kind == kind:
                    return RequestPermissionResponse(
                        outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
                    )
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    def _confined(self, path: str, *, write: bool) -> Path:
        host = self.host
        if host is None or host.workspace is None:
            raise RequestError.invalid_params(
                {"message": f"{path}: no workspace to serve files from"}
            )
        try:
            if write:
                return host.workspace.for_write(path, host.cwd)
            return host.workspace.for_read(path, host.cwd)
        except PathRefused as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from exc
        except FileNotFoundError as exc:
            raise RequestError.resource_not_found(path) from exc

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:  # fmt: skip
        """Serve a read inside the workspace; ``line`` (1-based) and ``limit`` cut it."""
        real = self._confined(path, write=False)
        try:
            text = await asyncio.to_thread(real.read_text, encoding="utf-8", errors="replace")
        except OSError as exc:
            raise RequestError.resource_not_found(path) from exc
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            text = "".join(lines[start : start + limit if limit is not None else None])
        return ReadTextFileResponse(content=text)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        """Serve a write inside the workspace."""
        real = self._confined(path, write=True)
        try:
            await asyncio.to_thread(real.write_text, content, encoding="utf-8")
        except OSError as exc:
            raise RequestError.internal_error({"message": f"{path}: {exc}"}) from exc
        return WriteTextFileResponse()


def _raw(output: Any) -> str:
    if output is None:
        return ""
    return output if isinstance(output, str) else str(output)
