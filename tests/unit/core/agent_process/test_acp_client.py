"""`AcpClient`: ACP updates as wire events, permission requests through the gate, confined fs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, start_tool_call, update_agent_message_text, update_tool_call
from acp.schema import PermissionOption, ToolCallUpdate

from qodeassist_lsp.config.confinement import Confinement
from qodeassist_lsp.core.agent_process.acp_client import AcpClient, permission_of
from qodeassist_lsp.core.request_host import RequestHost
from qodeassist_lsp.core.tools import Tool, ToolContext, ToolRegistry
from qodeassist_lsp.wire.events import AgentToolCall, AgentToolResult, TextDelta

OPTIONS = [
    PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
    PermissionOption(option_id="no", name="Reject", kind="reject_once"),
]


class Gate:
    def __init__(self, refusal: str | None) -> None:
        self.refusal = refusal
        self.asked: list[tuple[str, str, dict[str, Any], str]] = []

    async def check(
        self, tool: Tool, arguments: dict[str, Any], context: ToolContext
    ) -> str | None:
        self.asked.append((tool.spec.name, tool.permission, arguments, context.scope))
        return self.refusal


def client_for(tmp_path: Path, gate: Gate | None = None) -> AcpClient:
    client = AcpClient()
    tools = ToolRegistry(gate)
    client.begin(RequestHost("chat-1", "r1", tools, lambda e: None, Confinement.of([tmp_path])))
    return client


async def test_updates_become_text_and_agent_tool_events(tmp_path: Path) -> None:
    client = client_for(tmp_path)
    await client.session_update("s", update_agent_message_text("hi"))
    start = start_tool_call("c1", "Read notes", kind="read", raw_input={"path": "n.txt"})
    await client.session_update("s", start)
    await client.session_update("s", update_tool_call("c1", status="in_progress"))
    await client.session_update("s", update_tool_call("c1", status="failed", raw_output="gone"))
    events = [client.queue.get_nowait() for _ in range(client.queue.qsize())]
    assert events == [
        [TextDelta("hi")],
        [AgentToolCall("c1", "Read notes", {"path": "n.txt"}, "read")],
        [AgentToolResult("c1", "Read notes", "gone", True)],
    ]


async def test_updates_outside_a_turn_are_dropped(tmp_path: Path) -> None:
    client = client_for(tmp_path)
    client.end()
    await client.session_update("s", update_agent_message_text("late"))
    assert client.queue.empty()


@pytest.mark.parametrize(("refusal", "picked"), [(None, "yes"), ("the user denied it", "no")])
async def test_permission_requests_go_through_the_gate(
    tmp_path: Path, refusal: str | None, picked: str
) -> None:
    gate = Gate(refusal)
    client = client_for(tmp_path, gate)
    call = ToolCallUpdate(tool_call_id="c2", title="Edit a.py", kind="edit", raw_input={"x": 1})
    answer = await client.request_permission("s", call, OPTIONS)
    assert answer.outcome.option_id == picked
    assert gate.asked == [("Edit a.py", "write", {"x": 1}, "chat-1")]


def test_unknown_kinds_need_execute_permission() -> None:
    assert permission_of("search") == "read"
    assert permission_of("move") == "write"
    assert permission_of("other") == permission_of(None) == "execute"


async def test_fs_is_served_inside_the_workspace_only(tmp_path: Path) -> None:
    workspace = tmp_path / "w"
    workspace.mkdir()
    (workspace / "a.txt").write_text("one\ntwo\nthree\n")
    (tmp_path / "secret.txt").write_text("secret")
    client = client_for(workspace)
    read = await client.read_text_file("s", str(workspace / "a.txt"), line=2, limit=1)
    assert read.content == "two\n"
    with pytest.raises(RequestError) as refused:
        await client.read_text_file("s", str(tmp_path / "secret.txt"))
    assert "outside" in str(refused.value.data)
    await client.write_text_file("s", "b.txt", "new")
    assert (workspace / "b.txt").read_text() == "new"
    with pytest.raises(RequestError):
        await client.write_text_file("s", str(tmp_path / "evil.txt"), "x")
    assert not (tmp_path / "evil.txt").exists()
