"""Fitting an MCP server's tool definitions: long descriptions cut, oversized tools left out."""

from __future__ import annotations

from typing import Any

import mcp_types

from qodeassist_lsp.mcp.limits import (
    MAX_DESCRIPTION_CHARS,
    MAX_SCHEMA_BYTES,
    MAX_SERVER_BYTES,
    fit_tools,
)


def tool(name: str, description: str = "Does it.", schema: dict[str, Any] | None = None) -> Any:
    return mcp_types.Tool(
        name=name, description=description, input_schema=schema or {"type": "object"}
    )


def big_schema(size: int) -> dict[str, Any]:
    return {"type": "object", "properties": {"a": {"type": "string", "description": "d" * size}}}


def test_small_definitions_pass_unchanged() -> None:
    tools = [tool("a"), tool("b")]
    assert fit_tools(tools).tools == tuple(tools) and fit_tools(tools).warnings == ()


def test_a_long_description_is_cut_and_says_so() -> None:
    fitted = fit_tools([tool("wordy", "w" * 100_000)])
    [cut] = fitted.tools
    assert cut.description is not None and len(cut.description) <= MAX_DESCRIPTION_CHARS
    assert cut.description.endswith("of 100000 characters shown]")
    assert fitted.warnings == (
        f"tool 'wordy': description cut to {MAX_DESCRIPTION_CHARS} characters",
    )


def test_an_oversized_schema_leaves_the_tool_out() -> None:
    fitted = fit_tools([tool("huge", schema=big_schema(MAX_SCHEMA_BYTES)), tool("fine")])
    assert [t.name for t in fitted.tools] == ["fine"]
    assert "'huge' left out" in fitted.warnings[0] and "schema" in fitted.warnings[0]


def test_tools_past_the_servers_total_are_left_out() -> None:
    each = MAX_SCHEMA_BYTES - 1000
    tools = [tool(f"t{n}", schema=big_schema(each)) for n in range(20)]
    fitted = fit_tools(tools)
    assert len(fitted.tools) == MAX_SERVER_BYTES // (each + 100)
    assert len(fitted.warnings) == 20 - len(fitted.tools)
    assert all("would pass" in warning for warning in fitted.warnings)
