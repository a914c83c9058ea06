"""Tools a session can offer a model, and the contributors that register them.

A ``Tool`` declares a definition (name, description, JSON-schema parameters) and a permission
class, and runs with the parsed arguments and a ``ToolContext`` (which conversation, request
and call it serves, and the request's event sink, so a tool can report a ``fileEdit``).
``ToolRegistry`` is one session's set; before a tool runs, the registry's ``ToolGate`` (the
permission policy, injected from above) may refuse it, and the refusal is the tool's result.
``ToolContributorRegistry`` holds the callbacks (built-in tool kit, skills, MCP client tools)
that fill a session's registry for its pipeline, so features never need to know where tools
come from.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

from qodeassist_lsp.config.pipelines import PipelineSpec
from qodeassist_lsp.core.events import SessionEvent
from qodeassist_lsp.wire.tools import ToolSpec

log = logging.getLogger("qodeassist.tools")

TOOL_OUTPUT_CAP: Final = 64 * 1024
"""Bytes of a tool's output the model and the client get (terminal, build and MCP tools)."""


def cap_output(text: str, cap: int = TOOL_OUTPUT_CAP) -> str:
    """Return ``text`` cut to its first ``cap`` UTF-8 bytes, with a line saying so if it was cut."""
    if len(text) <= cap // 4:  # no character is over 4 bytes: certainly short enough
        return text
    data = text.encode("utf-8", errors="surrogatepass")
    if len(data) <= cap:
        return text
    head = data[:cap].decode("utf-8", errors="ignore")  # a character cut in half goes
    return f"{head}\n[output cut: {cap} of {len(data)} bytes shown]"


@dataclass(frozen=True)
class ToolOutput:
    """What a tool produced: text for the model, flagged when it is an error."""

    content: str
    is_error: bool = False


PermissionClass = Literal["read", "write", "execute"]
"""What a tool may do: read files and state, write files, or run commands (SPEC §4)."""


def _drop(_event: SessionEvent) -> None:
    """Discard an event (a tool run outside a request)."""


@dataclass(frozen=True)
class ToolContext:
    """Whom a tool call serves: the conversation, the request, the call and its event sink."""

    scope: str = ""
    """The conversation the call belongs to (a chat id); per-chat tool state is keyed on it."""
    request_id: str = ""
    call_id: str = ""
    emit: Callable[[SessionEvent], None] = _drop
    """Sends an event (a ``fileEdit``) into the request's stream."""


class Tool(Protocol):
    """A tool the model may call."""

    @property
    def spec(self) -> ToolSpec:
        """The definition sent to the provider."""
        ...

    @property
    def permission(self) -> PermissionClass:
        """The permission class the policy of ``[tools]`` decides on."""
        ...

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        """Run with the model's arguments; raise or return an error output on failure."""
        ...


class ToolGate(Protocol):
    """Decides whether a tool call may run (the permission policy; may ask the user)."""

    async def check(
        self, tool: Tool, arguments: dict[str, Any], context: ToolContext
    ) -> str | None:
        """Return None to run the call, or the reason it is refused (the model sees it)."""
        ...


class ToolRegistry:
    """The tools of one session, by name, behind an optional permission gate."""

    def __init__(self, gate: ToolGate | None = None) -> None:
        self._tools: dict[str, Tool] = {}
        self.gate = gate
        """Asked before every call; None runs every call (tests, the CLI without a policy)."""

    def register(self, tool: Tool) -> None:
        """Add ``tool``, replacing one of the same name."""
        self._tools[tool.spec.name] = tool

    def unregister(self, name: str) -> None:
        """Remove the tool ``name`` if present."""
        self._tools.pop(name, None)

    def clear(self) -> None:
        """Remove every tool."""
        self._tools.clear()

    def __len__(self) -> int:
        return len(self._tools)

    def __bool__(self) -> bool:
        return bool(self._tools)

    def specs(self) -> list[ToolSpec]:
        """Return the definitions of every registered tool, in registration order."""
        return [tool.spec for tool in self._tools.values()]

    def permission_of(self, name: str) -> str:
        """Return the permission class of tool ``name``, or "" if it is not registered."""
        tool = self._tools.get(name)
        return tool.permission if tool is not None else ""

    async def execute(
        self, name: str, arguments: dict[str, Any], context: ToolContext | None = None
    ) -> ToolOutput:
        """Run tool ``name``; unknown or refused tools and failures become error outputs."""
        tool = self._tools.get(name)
        if tool is None:
            return ToolOutput(f"Error: Tool not found: {name}", is_error=True)
        context = context or ToolContext()
        try:
            if self.gate is not None:
                refusal = await self.gate.check(tool, arguments, context)
                if refusal is not None:
                    return ToolOutput(f"Error: {refusal}", is_error=True)
            return await tool.run(arguments, context)
        except Exception as exc:
            log.warning("tool %s failed: %s", name, exc)
            return ToolOutput(f"Error: {exc}", is_error=True)


ToolContributor = Callable[[ToolRegistry, PipelineSpec], None]
"""Registers tools on a session's registry; the pipeline lets refactor get read tools only."""


class ToolContributorRegistry:
    """Callbacks that register tools on each session that uses tools."""

    def __init__(self) -> None:
        self._contributors: list[ToolContributor] = []
        self.gate: ToolGate | None = None
        """The permission gate every filled registry gets (set where the tool kit is wired)."""

    def add(self, contributor: ToolContributor) -> None:
        """Register ``contributor``; it runs for every session created afterwards."""
        self._contributors.append(contributor)

    def apply_to(self, registry: ToolRegistry, pipeline: PipelineSpec) -> None:
        """Let every contributor register its tools on ``registry`` for ``pipeline``."""
        registry.gate = self.gate
        for contributor in self._contributors:
            contributor(registry, pipeline)
