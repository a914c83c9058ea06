"""ACP agents as providers when things go wrong: a real agent process that misbehaves on cue.

`tests/support/acp_fault_agent.py` is an ACP agent built on the SDK's agent side; the prompt
says what it does. Our LSP chat (over stdio) serves its ``fs`` reads inside the workspace only,
turns a crash or a flood into one clear ``failed`` event and keeps serving, tells it
``session/cancel`` on cancel, keeps at most ``max_processes`` of them running (closing the least
recently used) and reports a missing program as a configuration error naming its npm package.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.lsp.conftest import server_env
from tests.e2e.lsp.test_chat import request, start, texts
from tests.support.replay_server import ReplayServer
from tests.support.waiting import until

AGENT_SCRIPT = Path(__file__).resolve().parents[2] / "support/acp_fault_agent.py"
PROVIDERS = """schema_version = 1
name = "Fault ACP"
client_api = "ACP Agent"
command = {command}
max_processes = 2

[env]
ACP_FAULT_LOG = "{log}"
"""
MISSING = """schema_version = 1
name = "Missing ACP"
client_api = "ACP Agent"
command = ["qodeassist-no-such-agent"]
package = "@zed-industries/claude-code-acp"
"""
AGENTS = """schema_version = 1
name = "{name}"
extends = "Embedded Chat"
provider_instance = "{provider}"
enable_tools = false
"""
SECRET = "secret from outside the workspace"


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in server_env(lsp_home).items():
        monkeypatch.setenv(key, value)
    command = json.dumps([sys.executable, str(AGENT_SCRIPT)])
    providers = lsp_home / "config/providers"
    (providers / "fault.toml").write_text(
        PROVIDERS.format(command=command, log=lsp_home / "fault.log")
    )
    (providers / "missing.toml").write_text(MISSING)
    agents = lsp_home / "config/agents"
    (agents / "fault.toml").write_text(AGENTS.format(name="Fault Chat", provider="Fault ACP"))
    (agents / "missing.toml").write_text(AGENTS.format(name="Missing Chat", provider="Missing ACP"))
    (lsp_home / "config/pipelines.toml").write_text(
        '[pipelines]\nchat_assistant = ["Fault Chat", "Missing Chat"]\n'
    )
    (lsp_home / "project/notes.txt").write_text("seven apples\n")
    (lsp_home / "outside.txt").write_text(SECRET + "\n")


async def send(client: Any, events: Any, message: str, **extra: Any) -> list[dict[str, Any]]:
    sent = await request(client, "chat/send", {"message": message, **extra})
    await events.terminal(sent["requestId"], within=60)
    return events.of(sent["requestId"])


async def test_fs_reads_are_served_inside_the_workspace_only(client, lsp_home):
    events = await start(client)
    inside = await send(client, events, f"read {lsp_home / 'project/notes.txt'}")
    assert inside[-1]["kind"] == "finished" and texts(inside) == "seven apples\n"
    relative = await send(client, events, "read notes.txt")
    assert texts(relative) == "seven apples\n"
    outside = await send(client, events, f"read {lsp_home / 'outside.txt'}")
    assert outside[-1]["kind"] == "finished"
    assert texts(outside).startswith("refused: Invalid params")
    assert "outside the workspace folders" in texts(outside)
    assert SECRET not in texts(outside)


async def test_a_crash_mid_turn_is_one_failed_event_and_the_server_keeps_serving(client):
    events = await start(client)
    crashed = await send(client, events, "crash")
    kinds = [e["kind"] for e in crashed]
    assert kinds == ["text", "failed"], crashed
    error = crashed[-1]["error"]
    assert error["category"] == "provider"
    assert "'Fault ACP': the agent exited with code 3 mid-turn" in error["message"]
    again = await send(client, events, "hello", chatId=crashed[0]["chatId"])
    assert again[-1]["kind"] == "finished" and texts(again).startswith("echo:")
    # The fresh process is told the conversation so far.
    assert "The conversation so far" in texts(again) and "crash" in texts(again)


async def test_a_flood_of_output_is_cut_off_as_a_failure(client):
    events = await start(client)
    flooded = await send(client, events, "flood 150")
    assert flooded[-1]["kind"] == "failed"
    assert "passed 1000000 characters and was stopped" in flooded[-1]["error"]["message"]
    assert len(texts(flooded)) <= 1_010_000
    after = await send(client, events, "still there?")
    assert after[-1]["kind"] == "finished"


async def test_cancel_tells_the_agent_and_ends_the_turn_cancelled(client, lsp_home):
    events = await start(client)
    sent = await request(client, "chat/send", {"message": "hang"})
    await events.first(sent["requestId"], "text", within=60)
    assert await request(client, "chat/cancel", {"chatId": sent["chatId"]}) is None
    terminal = await events.terminal(sent["requestId"])
    assert terminal["kind"] == "cancelled"
    await until((lsp_home / "fault.log").exists)
    assert (lsp_home / "fault.log").read_text().startswith("cancelled s-")
    after = await send(client, events, "next", chatId=sent["chatId"])
    assert after[-1]["kind"] == "finished"


def pid_of(streamed: list[dict[str, Any]]) -> str:
    return texts(streamed).rsplit("(pid ", 1)[1]


async def test_one_warm_process_per_chat_and_the_least_recently_used_is_closed(client):
    events = await start(client)
    first = await send(client, events, "one")
    chat_a = first[0]["chatId"]
    assert pid_of(await send(client, events, "two", chatId=chat_a)) == pid_of(first)
    second = await send(client, events, "b")
    third = await send(client, events, "c")  # a third process: chat A's is closed
    assert len({pid_of(first), pid_of(second), pid_of(third)}) == 3
    back = await send(client, events, "back", chatId=chat_a)
    assert pid_of(back) not in {pid_of(first), pid_of(second), pid_of(third)}


async def test_a_missing_program_is_a_configuration_error_naming_its_package(client):
    events = await start(client)
    failed = await send(client, events, "hi", agent="Missing Chat")
    [terminal] = failed
    assert terminal["kind"] == "failed" and terminal["error"]["category"] == "config"
    message = terminal["error"]["message"]
    assert "'qodeassist-no-such-agent' is not on PATH" in message
    assert "npm install -g @zed-industries/claude-code-acp" in message
