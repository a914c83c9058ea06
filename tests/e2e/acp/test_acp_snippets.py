"""The ACP editor snippets in ``editors/acp/`` start a working agent: the command and arguments
are read from the very files, resolved on PATH as the editor would, and chatted with by the
ACP SDK's client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block

from tests.e2e.acp.conftest import Editor, agent_env
from tests.e2e.snippets.conftest import EDITORS, resolve_command, search_path
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply


@pytest.mark.parametrize("snippet", ["zed-settings.json", "jetbrains-acp.json"])
async def test_the_snippet_starts_an_agent_that_answers(
    snippet: str, acp_home: Path, replay: ReplayServer
) -> None:
    [server] = json.loads((EDITORS / "acp" / snippet).read_text())["agent_servers"].values()
    replay.script("/v1/chat/completions", chat_reply("From the snippet"))
    env = {**agent_env(acp_home), **server.get("env", {}), "PATH": search_path()}
    editor = Editor()
    async with spawn_agent_process(
        editor, resolve_command(server["command"]), *server["args"], env=env,
        cwd=str(acp_home / "project"),
    ) as (conn, _process):  # fmt: skip
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(acp_home / "project"), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
    assert answer.stop_reason == "end_turn"
    assert editor.text() == "From the snippet"
