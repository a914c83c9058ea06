"""An MCP server's tool as a session `Tool`: its name, its permission class and its result text.

The model sees ``<server>__<tool>``, cut to the ``^[a-zA-Z0-9_-]{1,64}$`` every provider accepts
(a hash keeps cut names apart). The permission class comes from the tool's annotations, which
are hints from a server the user chose to run: ``readOnlyHint`` → read, ``destructiveHint`` →
write, anything else → execute, so an unannotated tool gets the strictest default policy.
Its answer is cut to ``TOOL_OUTPUT_CAP`` bytes like the built-in tools' output, with a line
saying so, before the model or the editor sees it (its definition was cut by `limits`).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Protocol

import mcp_types

from qodeassist_lsp.core.tools import PermissionClass, ToolContext, ToolOutput, cap_output
from qodeassist_lsp.mcp.limits import description_of
from qodeassist_lsp.wire.tools import ToolSpec

MAX_NAME = 64
SEPARATOR = "__"
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]+")


def tool_name(server: str, tool: str) -> str:
    """Return the provider-safe name ``<server>__<tool>``, at most 64 characters."""
    name = _UNSAFE.sub("_", server) + SEPARATOR + _UNSAFE.sub("_", tool)
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return name[: MAX_NAME - 9] + "_" + digest


def permission_of(tool: mcp_types.Tool) -> PermissionClass:
    """Map the tool's annotations to a permission class (see the module docstring)."""
    hints = tool.annotations
    if hints is not None and hints.read_only_hint:
        return "read"
    if hints is not None and hints.destructive_hint:
        return "write"
    return "execute"


def result_text(result: mcp_types.CallToolResult) -> str:
    """Return the text the model gets from a ``tools/call`` result."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
            parts.append(f"[{block.type} {block.mime_type}, {len(block.data)} base64 characters]")
        elif isinstance(block, mcp_types.EmbeddedResource):
            resource = block.resource
            text = getattr(resource, "text", None)
            parts.append(text if isinstance(text, str) else f"[resource {resource.uri}]")
        else:
            parts.append(f"[{block.type}]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


class ToolCaller(Protocol):
    """Forwards a call to the server that owns the tool."""

    @property
    def server_name(self) -> str:
        """The server's name in ``mcp.json``."""
        ...

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolOutput:
        """Call ``tool``; a failure or a timeout is an error output, never an exception."""
        ...


class RemoteTool:
    """One tool of a connected MCP server, offered to the model under a prefixed name."""

    def __init__(self, caller: ToolCaller, tool: mcp_types.Tool) -> None:
        self._caller = caller
        self.remote_name = tool.name
        """The tool's own name on its server."""
        self.permission: PermissionClass = permission_of(tool)
        description = description_of(tool)
        self.spec = ToolSpec(
            tool_name(caller.server_name, tool.name),
            f"[MCP server {caller.server_name}] {description}",
            dict(tool.input_schema),
        )

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        """Forward the call to the server (``tools/call``); cut its answer like any tool's."""
        output = await self._caller.call(self.remote_name, arguments)
        return ToolOutput(cap_output(output.content), output.is_error)
