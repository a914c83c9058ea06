"""ACP agents as providers, both sides ours: our LSP chat talks to our own ``qodeassist-lsp acp``.

The outer server (driven over stdio like any editor would) has a provider instance with
``client_api = "ACP Agent"`` whose ``command`` starts ``python -m qodeassist_lsp acp`` with a
configuration of its own; that inner agent's model is a loopback `ReplayServer`. The answer
streams through both; the inner agent's tool call shows as ``toolCall``/``toolResult``; its
permission question goes through the outer ``[tools.permissions]`` policy to the editor's
``window/showMessageRequest``; its file reads and writes are served by the outer server, inside
the workspace only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.acp.test_acp_tools import EDITS, NEW, OLD, ROUTE
from tests.e2e.lsp.conftest import server_env
from tests.e2e.lsp.test_chat import request, start, texts
from tests.e2e.lsp.test_file_edits import tool_call_reply
from tests.e2e.lsp.test_tools import Asked
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply, write_embedded_instances

PROVIDER = """schema_version = 1
name = "Inner ACP"
client_api = "ACP Agent"
command = {command}
package = "qodeassist-lsp"

[env]
HOME = "{inner}/home"
QODEASSIST_CONFIG_DIR = "{inner}/config"
QODEASSIST_DATA_DIR = "{inner}/data"
QODEASSIST_LOG_LEVEL = "INFO"
"""
OUTER_AGENT = """schema_version = 1
name = "E2E ACP Chat"
extends = "Embedded Chat"
provider_instance = "Inner ACP"
enable_tools = false
"""
INNER_AGENT = """schema_version = 1
name = "E2E Tool Chat"
extends = "Embedded Chat"
enable_tools = true
"""


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in server_env(lsp_home).items():
        monkeypatch.setenv(key, value)
    inner = lsp_home / "inner"
    for name in ("config/agents", "config/providers", "data", "home"):
        (inner / name).mkdir(parents=True)
    write_embedded_instances(inner / "config/providers", replay.url)
    (inner / "config/agents/tool.toml").write_text(INNER_AGENT)
    (inner / "config/pipelines.toml").write_text(
        '[pipelines]\nchat_assistant = ["E2E Tool Chat"]\n'
    )
    (inner / "config/settings.toml").write_text('[tools.permissions]\nwrite = "ask"\n')
    command = json.dumps([sys.executable, "-m", "qodeassist_lsp", "acp"])
    (lsp_home / "config/providers/inner.toml").write_text(
        PROVIDER.format(command=command, inner=inner)
    )
    (lsp_home / "config/agents/acp.toml").write_text(OUTER_AGENT)
    (lsp_home / "config/pipelines.toml").write_text(
        '[pipelines]\nchat_assistant = ["E2E ACP Chat"]\n'
    )
    (lsp_home / "config/settings.toml").write_text('[tools.permissions]\nwrite = "ask"\n')


def script_edit(replay: ReplayServer) -> None:
    replay.script(
        ROUTE,
        [
            tool_call_reply("call_0", "edit_file", {"path": "greet.py", "edits": EDITS}),
            chat_reply("Done."),
        ],
    )


async def send(client: Any, events: Any, message: str, **extra: Any) -> list[dict[str, Any]]:
    sent = await request(client, "chat/send", {"message": message, **extra})
    terminal = await events.terminal(sent["requestId"], within=90)
    streamed = events.of(sent["requestId"])
    assert terminal["kind"] in ("finished", "failed"), streamed
    return streamed


async def test_the_answer_streams_through_our_own_acp_agent(client, lsp_home, replay):
    events = await start(client)
    replay.script(ROUTE, chat_reply("Hello", " from", " inside"))
    streamed = await send(client, events, "Say hello")
    assert streamed[-1]["kind"] == "finished", streamed
    assert streamed[-1]["agent"] == "E2E ACP Chat"
    assert texts(streamed) == "Hello from inside"
    assert replay.last.json["messages"][-1]["content"] == "Say hello"


async def test_an_agent_tool_call_is_shown_and_its_permission_is_ours(client, lsp_home, replay):
    target = lsp_home / "project/greet.py"
    target.write_text(OLD)
    asked = Asked(client, ["Allow once", "Deny"])
    events = await start(client)

    script_edit(replay)
    allowed = await send(client, events, "Use an f-string")
    assert allowed[-1]["kind"] == "finished", allowed
    [call] = [e for e in allowed if e["kind"] == "toolCall"]
    assert call["toolCallId"] == "call_0" and call["permission"] == "write"
    assert call["name"].startswith("edit_file")
    [result] = [e for e in allowed if e["kind"] == "toolResult"]
    assert result["toolCallId"] == "call_0" and result["ok"], result
    [question] = asked.questions
    assert "change files" in question.message and "edit_file" in question.message
    assert target.read_text() == NEW  # written by our fs/write_text_file, inside the workspace
    assert texts(allowed).endswith("Done.")

    target.write_text(OLD)
    script_edit(replay)
    denied = await send(client, events, "Again")
    assert denied[-1]["kind"] == "finished", denied
    [result] = [e for e in denied if e["kind"] == "toolResult"]
    assert not result["ok"]
    assert len(asked.questions) == 2
    assert target.read_text() == OLD
