"""How much of an MCP server's tool definitions a chat request may carry.

Every chat request sends every offered tool's definition, so one server with bloated
definitions would make every request huge (one real server's made each 3.7 MB). After each
``tools/list`` the definitions are fitted: a description over `MAX_DESCRIPTION_CHARS` is cut
(and says so); a tool whose parameter schema is over `MAX_SCHEMA_BYTES` is not offered (a cut
schema would not be valid JSON Schema, and a tool without its parameters cannot be called
well); tools past `MAX_SERVER_BYTES` of definitions in all are not offered. Each cut is a
warning in the log and in the server's ``qodeassist/status`` entry.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import mcp_types

MAX_DESCRIPTION_CHARS: Final = 2048
"""The longest tool description offered to the model (longer ones are cut)."""
MAX_SCHEMA_BYTES: Final = 32 * 1024
"""The largest parameter schema of one tool, as JSON (a tool with a larger one is left out)."""
MAX_SERVER_BYTES: Final = 256 * 1024
"""The most definition bytes (name, description, schema) one server's tools may add in all."""


@dataclass(frozen=True)
class FittedTools:
    """The tools to offer and what was cut or left out to fit the limits."""

    tools: tuple[mcp_types.Tool, ...]
    warnings: tuple[str, ...] = ()


def description_of(tool: mcp_types.Tool) -> str:
    """Return the text offered as the tool's description (its title or name if it has none)."""
    return tool.description or tool.title or tool.name


def fit_tools(tools: Sequence[mcp_types.Tool]) -> FittedTools:
    """Cut long descriptions and leave out tools over the schema or the total limit."""
    kept: list[mcp_types.Tool] = []
    warnings: list[str] = []
    total = 0
    for tool in tools:
        description = description_of(tool)
        if len(description) > MAX_DESCRIPTION_CHARS:
            shown = MAX_DESCRIPTION_CHARS - 60
            description = (
                f"{description[:shown]}… [description cut: {shown} of "
                f"{len(description)} characters shown]"
            )
            tool = tool.model_copy(update={"description": description})
            warnings.append(
                f"tool {tool.name!r}: description cut to {MAX_DESCRIPTION_CHARS} characters"
            )
        schema = len(json.dumps(tool.input_schema, ensure_ascii=False).encode())
        if schema > MAX_SCHEMA_BYTES:
            warnings.append(
                f"tool {tool.name!r} left out: its parameter schema is {schema} bytes "
                f"(at most {MAX_SCHEMA_BYTES})"
            )
            continue
        size = schema + len(description.encode()) + len(tool.name)
        if total + size > MAX_SERVER_BYTES:
            warnings.append(
                f"tool {tool.name!r} left out: the server's tool definitions would pass "
                f"{MAX_SERVER_BYTES} bytes"
            )
            continue
        total += size
        kept.append(tool)
    return FittedTools(tuple(kept), tuple(warnings))
