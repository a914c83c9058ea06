"""The headless gate's refusals read as English: "an execute tool", "a write tool"."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest

from qodeassist_lsp.core.tools import Tool, ToolContext
from qodeassist_lsp.mcp.server_gate import HeadlessGate


def _tool(permission: str) -> Tool:
    return cast(Tool, SimpleNamespace(spec=SimpleNamespace(name="run"), permission=permission))


@pytest.mark.parametrize(
    ("permission", "decision", "expected"),
    [
        ("execute", "deny", "run is an execute tool and [tools] denies execute tools"),
        ("execute", "ask", "run is an execute tool: [tools] says to ask"),
        ("write", "deny", "run is a write tool and"),
    ],
)
async def test_refusals_use_the_right_article(
    permission: str, decision: Any, expected: str
) -> None:
    gate = HeadlessGate(lambda _: decision, lambda: ())
    refusal = await gate.check(_tool(permission), {}, ToolContext())
    assert refusal is not None and refusal.startswith(expected)
