"""The project's rules files over stdio: chat, plan mode and refactor prompts, and the status.

A rules file reaches the system prompt of the recorded provider request and leaves it once the
file is deleted; refactor gets the files nearest to its document first; ``qodeassist/status``
lists the files in effect for the workspace.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.lsp.conftest import serve_from
from tests.e2e.lsp.test_chat import _plain, request, start
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply
from tests.support.system_prompt import system_prompt

ROUTE = "/v1/chat/completions"
RULE = "Prefer pathlib over os.path (rule 31d8)."
NEAR = "In this package, functions return lists (rule 77aa)."
DOC = "def total(xs):\n    s = 0\n    for x in xs:\n        s = s + x\n    return s\n"


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_from(lsp_home, replay, monkeypatch)


def last_system(replay: ReplayServer) -> str:
    return system_prompt(replay.requests[-1].json)


async def test_chat_and_plan_mode_get_the_rules_until_the_file_is_deleted(
    client: Any, lsp_home: Path, replay: ReplayServer
) -> None:
    rules = lsp_home / "project/AGENTS.md"
    rules.write_text(RULE + "\n", encoding="utf-8")
    (lsp_home / "project/pkg").mkdir()
    (lsp_home / "project/pkg/AGENTS.md").write_text(NEAR, encoding="utf-8")
    events = await start(client)
    replay.script(ROUTE, [chat_reply("One."), chat_reply("1) Read\n2) Report"), chat_reply("Two.")])

    sent = await request(client, "chat/send", {"message": "first"})
    await events.terminal(sent["requestId"])
    assert "# Project rules (from AGENTS.md)" in last_system(replay)
    assert f"## AGENTS.md\n\n{RULE}" in last_system(replay)
    assert NEAR not in last_system(replay)  # a chat has no file: the workspace root's only

    status = _plain(await client.protocol.send_request_async("qodeassist/status", {}))
    assert status["rules"]["files"] == [
        {
            "path": "AGENTS.md",
            "source": "agents_md",
            "chars": len(RULE) + 1,
            "truncated": False,
            "omitted": False,
        }
    ]

    planned = await request(client, "chat/send", {"message": "plan it", "mode": "plan"})
    await events.terminal(planned["requestId"])
    assert RULE in last_system(replay)

    rules.unlink()
    again = await request(client, "chat/send", {"message": "second", "chatId": sent["chatId"]})
    await events.terminal(again["requestId"])
    assert len(replay.requests) == 3
    assert RULE not in last_system(replay) and "Project rules" not in last_system(replay)
    status = _plain(await client.protocol.send_request_async("qodeassist/status", {}))
    assert status["rules"]["files"] == []


async def test_refactor_gets_the_rules_nearest_to_its_document_first(
    client: Any, lsp_home: Path, replay: ReplayServer
) -> None:
    project = lsp_home / "project"
    (project / "AGENTS.md").write_text(RULE, encoding="utf-8")
    (project / "pkg").mkdir()
    (project / "pkg/AGENTS.md").write_text(NEAR, encoding="utf-8")
    path = project / "pkg/total.py"
    path.write_text(DOC, encoding="utf-8")

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        return types.ApplyWorkspaceEditResult(applied=False)  # the document stays as it is

    await client.initialize_session(client.init_params)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(path.as_uri(), "python", 1, DOC))
    )
    replay.script(ROUTE, [chat_reply("    return sum(xs)"), chat_reply("    return sum(xs)")])
    arguments = {
        "uri": path.as_uri(),
        "range": {"start": {"line": 1, "character": 0}, "end": {"line": 4, "character": 12}},
        "instruction": "Use the builtin",
    }
    command = types.ExecuteCommandParams(command="qodeassist.refactor", arguments=[arguments])
    await client.workspace_execute_command_async(command)
    sent = last_system(replay)
    assert sent.index(f"## pkg/AGENTS.md\n\n{NEAR}") < sent.index(f"## AGENTS.md\n\n{RULE}")
    assert sent.index("## AGENTS.md") < sent.index("s = s + x")  # before the refactor layer

    (project / "pkg/AGENTS.md").unlink()
    await client.workspace_execute_command_async(command)
    assert len(replay.requests) == 2
    assert NEAR not in last_system(replay) and RULE in last_system(replay)
