"""The MCP client hub against a real SDK server (tests/support/mcp_demo_server.py).

Over stdio and streamable HTTP on 127.0.0.1: connect, list, call, ``list_changed``; a hung
server and a hung call become tool errors; a project server waits for approval; no process is
left behind; and a chat calls the server's tool through a replayed tool-call stream.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT, QUICK_REFACTOR, PipelineSpec
from qodeassist_lsp.core.content import user_text
from qodeassist_lsp.core.events import FinishedEvent, ToolCallEvent, ToolResultEvent
from qodeassist_lsp.core.runtime import Runtime
from qodeassist_lsp.core.tools import ToolRegistry
from qodeassist_lsp.mcp.approvals import ApprovalStore
from qodeassist_lsp.mcp.definitions import ConnectionLimits, ServerDefinition
from qodeassist_lsp.mcp.hub import HubConfig, McpHub
from tests.support.processes import gone
from tests.support.replay_server import ReplayServer, Reply, fixture_bytes
from tests.support.wire_cases import TARGETS

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO = ("-m", "tests.support.mcp_demo_server")
LIMITS = ConnectionLimits(connect_timeout_s=20, call_timeout_s=20)


def stdio(name: str = "demo", *extra: str, origin: str = "user") -> ServerDefinition:
    return ServerDefinition(
        name,
        "stdio",
        origin,
        command=sys.executable,
        args=(*DEMO, *extra),
        cwd=str(REPO_ROOT),  # type: ignore[arg-type]
    )


async def until(check: Callable[[], bool], within: float = 30) -> None:
    """Poll ``check``: the hub changes state in its own tasks, which a test only observes."""
    async with asyncio.timeout(within):
        while not check():  # noqa: ASYNC110
            await asyncio.sleep(0.05)


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[McpHub]:
    hub = McpHub(ApprovalStore(tmp_path / "data"))
    yield hub
    await hub.aclose()


def state(hub: McpHub, name: str = "demo") -> str:
    connection = hub.connection(name)
    assert connection is not None
    return connection.state


def registry_of(hub: McpHub, pipeline: PipelineSpec = CHAT_ASSISTANT) -> ToolRegistry:
    registry = ToolRegistry()
    hub.contribute(registry, pipeline)
    return registry


async def test_stdio_server_lists_calls_and_follows_list_changed(hub: McpHub) -> None:
    await hub.configure(HubConfig((stdio(),), LIMITS))
    await until(lambda: state(hub) == "connected")
    registry = registry_of(hub)
    names = [spec.name for spec in registry.specs()]
    assert names == [
        "demo__echo",
        "demo__get_weather",
        "demo__pid",
        "demo__sleep",
        "demo__touch",
        "demo__run",
        "demo__grow",
    ]
    assert [registry.permission_of(n) for n in ("demo__echo", "demo__touch", "demo__run")] == [
        "read",
        "write",
        "execute",
    ]
    output = await registry.execute("demo__echo", {"text": "hi"})
    assert (output.content, output.is_error) == ("echo: hi", False)

    # The server adds a tool and says so: the hub lists again, new sessions get it.
    assert (await registry.execute("demo__grow", {})).content == "grown"
    await until(lambda: "demo__extra" in [s.name for s in registry_of(hub).specs()])
    assert (await registry_of(hub).execute("demo__extra", {})).content == "extra!"

    status = hub.status()["servers"]
    assert status == [
        {
            "name": "demo",
            "origin": "user",
            "transport": "stdio",
            "state": "connected",
            "tools": 8,
            "attempts": 1,
            "error": "",
            "warnings": [],
        }
    ]


async def test_refactor_sessions_get_read_only_tools(hub: McpHub) -> None:
    await hub.configure(HubConfig((stdio(),), LIMITS))
    await until(lambda: state(hub) == "connected")
    registry = registry_of(hub, QUICK_REFACTOR)
    assert {registry.permission_of(spec.name) for spec in registry.specs()} == {"read"}
    assert "demo__touch" not in [spec.name for spec in registry.specs()]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_streamable_http_server(hub: McpHub) -> None:
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable, *DEMO, "--http", str(port), cwd=REPO_ROOT
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        definition = ServerDefinition("web", "http", "user", url=url)
        await hub.configure(HubConfig((definition,), LIMITS))
        await until(lambda: state(hub, "web") == "connected")
        output = await registry_of(hub).execute("web__get_weather", {"location": "Oslo"})
        assert (output.content, output.is_error) == ("sunny in Oslo", False)
    finally:
        process.terminate()
        await process.wait()


async def test_a_hung_server_fails_to_connect_and_its_tools_stay_away(hub: McpHub) -> None:
    limits = ConnectionLimits(connect_timeout_s=1, call_timeout_s=1)
    await hub.configure(HubConfig((stdio("demo", "--hang"),), limits))
    await until(lambda: state(hub) == "failed")
    connection = hub.connection("demo")
    assert connection is not None and "client_connect_timeout_s" in connection.error
    assert len(registry_of(hub)) == 0
    output = await connection.call("echo", {"text": "x"})
    assert output.is_error and "'demo' is" in output.content


async def test_a_hung_call_is_one_tool_error_and_the_server_comes_back(hub: McpHub) -> None:
    limits = ConnectionLimits(connect_timeout_s=20, call_timeout_s=1)
    await hub.configure(HubConfig((stdio(),), limits))
    await until(lambda: state(hub) == "connected")
    registry = registry_of(hub)
    output = await registry.execute("demo__sleep", {})
    assert output.is_error
    assert "did not answer 'sleep' within 1 s" in output.content
    # Reconnected after the backoff; the same tool objects work again.
    await until(lambda: state(hub) == "connected" and hub.status()["servers"][0]["attempts"] == 2)
    assert (await registry.execute("demo__echo", {"text": "again"})).content == "echo: again"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_stopping_the_hub_leaves_no_process(tmp_path: Path) -> None:
    hub = McpHub(ApprovalStore(tmp_path))
    await hub.configure(HubConfig((stdio(),), LIMITS))
    await until(lambda: state(hub) == "connected")
    pid = int((await registry_of(hub).execute("demo__pid", {})).content)
    assert alive(pid)
    await hub.aclose()
    await until(lambda: not alive(pid), within=10)


async def test_a_changed_definition_restarts_the_server(hub: McpHub) -> None:
    await hub.configure(HubConfig((stdio(),), LIMITS))
    await until(lambda: state(hub) == "connected")
    pid = int((await registry_of(hub).execute("demo__pid", {})).content)
    changed = ServerDefinition(
        "demo", "stdio", "user", command=sys.executable, args=DEMO, cwd=str(REPO_ROOT),
        env={"DEMO": "1"},
    )  # fmt: skip
    await hub.configure(HubConfig((changed,), LIMITS))
    await until(lambda: not alive(pid), within=10)
    await until(lambda: state(hub) == "connected")
    assert int((await registry_of(hub).execute("demo__pid", {})).content) != pid


class Asker:
    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[str] = []

    async def approve(self, project: Path, server: ServerDefinition) -> bool:
        self.asked.append(server.name)
        return self.answer


async def test_a_project_server_needs_approval(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    store = ApprovalStore(tmp_path / "data")
    config = HubConfig((stdio(origin="project"),), LIMITS, project=project)

    # Nobody to ask: not started.
    silent = McpHub(store)
    await silent.configure(config)
    assert state(silent) == "not-approved"
    assert len(registry_of(silent)) == 0
    await silent.aclose()

    # The user says no: not started, not asked again on a reload.
    refusing = Asker(False)
    hub = McpHub(store, refusing)
    await hub.configure(config)
    await until(lambda: state(hub) == "not-approved")
    await hub.configure(config)
    assert refusing.asked == ["demo"]
    await hub.aclose()

    # The user says yes: started, and remembered for this definition.
    approving = Asker(True)
    hub = McpHub(store, approving)
    await hub.configure(config)
    await until(lambda: state(hub) == "connected")
    await hub.aclose()
    again = Asker(False)
    hub = McpHub(store, again)
    await hub.configure(config)
    await until(lambda: state(hub) == "connected")
    assert again.asked == []
    await hub.aclose()


async def test_a_chat_calls_the_servers_tool(
    hub: McpHub, replay: ReplayServer, runtime: Runtime
) -> None:
    await hub.configure(HubConfig((stdio(),), LIMITS))
    await until(lambda: state(hub) == "connected")
    runtime.contributors.add(hub.contribute)
    target = TARGETS["claude"]
    # The recorded Anthropic tool call, asking for the prefixed name of the demo server's tool.
    recorded = fixture_bytes("anthropic/stream_text_then_tool_use_sdk.sse")
    first = recorded.replace(b'"name":"get_weather"', b'"name":"demo__get_weather"')
    assert first != recorded
    replay.script(
        target.route,
        [
            Reply(body=first, content_type="text/event-stream", split="events"),
            Reply("anthropic/stream_text_hello.sse", split="events"),
        ],
    )
    session = runtime.sessions.create(target.agent)
    request = session.send(user_text("Weather in Paris?"))
    events = [event async for event in request.events()]
    assert isinstance(events[-1], FinishedEvent), events
    [call] = [e for e in events if isinstance(e, ToolCallEvent)]
    [result] = [e for e in events if isinstance(e, ToolResultEvent)]
    assert (call.name, call.arguments) == ("demo__get_weather", {"location": "Paris"})
    assert (result.content, result.is_error) == ("sunny in Paris", False)
    offered = [tool["name"] for tool in replay.requests[0].json["tools"]]
    assert "demo__get_weather" in offered
    tool_result = replay.requests[1].json["messages"][-1]["content"][0]
    assert tool_result["content"] == "sunny in Paris"


HOSTILE = ("-m", "tests.support.mcp_hostile_server")


def hostile(*extra: str) -> ServerDefinition:
    return ServerDefinition(
        "hostile", "stdio", "user", command=sys.executable, args=(*HOSTILE, *extra),
        cwd=str(REPO_ROOT),  # type: ignore[arg-type]
    )  # fmt: skip


async def test_a_flood_of_output_is_cut_before_the_provider_and_the_client(
    hub: McpHub, replay: ReplayServer, runtime: Runtime
) -> None:
    await hub.configure(HubConfig((hostile(),), LIMITS))
    await until(lambda: state(hub, "hostile") == "connected")
    runtime.contributors.add(hub.contribute)
    target = TARGETS["claude"]
    recorded = fixture_bytes("anthropic/stream_text_then_tool_use_sdk.sse")
    first = recorded.replace(b'"name":"get_weather"', b'"name":"hostile__flood"')
    replay.script(
        target.route,
        [
            Reply(body=first, content_type="text/event-stream", split="events"),
            Reply("anthropic/stream_text_hello.sse", split="events"),
        ],
    )
    session = runtime.sessions.create(target.agent)
    events = [event async for event in session.send(user_text("Flood me")).events()]
    assert isinstance(events[-1], FinishedEvent), events
    [result] = [e for e in events if isinstance(e, ToolResultEvent)]
    cut = "[output cut: 65536 of 5000000 bytes shown]"
    # The client's event and the provider's next request carry the cut text, said to be cut.
    assert result.content.startswith("HEAD") and result.content.endswith(cut)
    assert len(result.content.encode()) < 66 * 1024
    assert len(result.to_json()["summary"]) <= 160
    sent = replay.requests[1].json["messages"][-1]["content"][0]["content"]
    assert sent == result.content
    assert len(replay.requests[1].body) < 200 * 1024


async def test_bloated_tool_definitions_are_cut_and_said_to_be(
    hub: McpHub, replay: ReplayServer, runtime: Runtime
) -> None:
    await hub.configure(HubConfig((hostile(),), LIMITS))
    await until(lambda: state(hub, "hostile") == "connected")
    specs = {spec.name: spec for spec in registry_of(hub).specs()}
    # The 1 MB schema cannot be cut into a valid one: that tool is not offered.
    assert sorted(specs) == ["hostile__family", "hostile__flood", "hostile__wordy"]
    wordy = specs["hostile__wordy"].description
    assert len(wordy) < 2200 and "[description cut:" in wordy
    warnings = hub.status()["servers"][0]["warnings"]
    assert any("huge_schema" in w and "schema" in w for w in warnings), warnings
    assert any("wordy" in w and "description" in w for w in warnings), warnings

    runtime.contributors.add(hub.contribute)
    target = TARGETS["claude"]
    replay.script(target.route, [Reply("anthropic/stream_text_hello.sse", split="events")])
    session = runtime.sessions.create(target.agent)
    events = [event async for event in session.send(user_text("Hello")).events()]
    assert isinstance(events[-1], FinishedEvent), events
    assert len(replay.requests[0].body) < 64 * 1024


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_stopping_the_hub_stops_the_children_of_a_server(tmp_path: Path) -> None:
    hub = McpHub(ApprovalStore(tmp_path))
    await hub.configure(HubConfig((hostile("--family"),), LIMITS))
    await until(lambda: state(hub, "hostile") == "connected")
    pids = [int(p) for p in (await registry_of(hub).execute("hostile__family", {})).content.split()]
    assert len(pids) == 2 and not any(gone(pid) for pid in pids)
    await hub.aclose()
    await until(lambda: all(gone(pid) for pid in pids), within=10)


async def test_a_missing_program_is_named_in_the_status(hub: McpHub) -> None:
    missing = ServerDefinition("gone", "stdio", "user", command="qa-no-such-program")
    await hub.configure(HubConfig((missing,), LIMITS))
    await until(lambda: state(hub, "gone") == "failed")
    connection = hub.connection("gone")
    assert connection is not None
    assert (
        connection.error
        == "'qa-no-such-program' was not found on PATH or in [mcp] client_extra_paths"
    )
