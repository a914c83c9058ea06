"""Tools a session can offer a model, and the contributors that register them.

A ``Tool`` declares a definition (name, description, JSON-schema parameters) and runs with the
parsed arguments. ``ToolRegistry`` is one session's set; ``ToolContributorRegistry`` holds the
callbacks (built-in tool kit, skills, MCP client tools) that fill a session's registry, so
features never need to know where tools come from.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from qodeassist_lsp.wire.tools import ToolSpec

log = logging.getLogger("qodeassist.tools")


@dataclass(frozen=True)
class ToolOutput:
    """What a tool produced: text for the model, flagged when it is an error."""

    content: str
    is_error: bool = False


class Tool(Protocol):
    """A tool the model may call."""

    @property
    def spec(self) -> ToolSpec:
        """The definition sent to the provider."""
        ...

    async def run(self, arguments: dict[str, Any]) -> ToolOutput:
        """Run with the model's arguments; raise or return an error output on failure."""
        ...


class ToolRegistry:
    """The tools of one session, by name."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

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

    async def execute(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        """Run tool ``name``; unknown tools and failures become error outputs, never raise."""
        tool = self._tools.get(name)
        if tool is None:
            return ToolOutput(f"Error: Tool not found: {name}", is_error=True)
        try:
            return await tool.run(arguments)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("tool %s failed: %s", name, exc)
            return ToolOutput(f"Error: {exc}", is_error=True)


ToolContributor = Callable[[ToolRegistry], None]


class ToolContributorRegistry:
    """Callbacks that register tools on each session that uses tools."""

    def __init__(self) -> None:
        self._contributors: list[ToolContributor] = []

    def add(self, contributor: ToolContributor) -> None:
        """Register ``contributor``; it runs for every session created afterwards."""
        self._contributors.append(contributor)

    def apply_to(self, registry: ToolRegistry) -> None:
        """Let every contributor register its tools on ``registry``."""
        for contributor in self._contributors:
            contributor(registry)
