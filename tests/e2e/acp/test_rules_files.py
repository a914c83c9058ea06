"""The project's rules files through ACP ``session/prompt``: in, and gone once deleted."""

from __future__ import annotations

from pathlib import Path

from acp import text_block

from tests.e2e.acp.conftest import Editor, running_agent
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply
from tests.support.system_prompt import system_prompt

ROUTE = "/v1/chat/completions"
RULE = "Keep every public function documented (rule 9c2a)."


async def test_an_agents_md_reaches_the_system_prompt_and_leaves_when_deleted(
    acp_home: Path, replay: ReplayServer
) -> None:
    project = acp_home / "project"
    rules = project / "AGENTS.md"
    rules.write_text(RULE + "\n", encoding="utf-8")
    (project / ".qodeassist/rules").mkdir(parents=True)
    (project / ".qodeassist/rules/style.md").write_text("Tabs, not spaces.\n", encoding="utf-8")
    replay.script(ROUTE, [chat_reply("One."), chat_reply("Two.")])
    editor = Editor()
    async with running_agent(acp_home, editor) as conn:
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("first")])
        sent = system_prompt(replay.requests[-1].json)
        assert "# Project rules (from AGENTS.md, .qodeassist/rules/*.md)" in sent
        assert sent.index(f"## AGENTS.md\n\n{RULE}") < sent.index(
            "## .qodeassist/rules/style.md\n\nTabs, not spaces."
        )
        rules.unlink()
        await conn.prompt(session_id=session.session_id, prompt=[text_block("second")])
    assert len(replay.requests) == 2
    after = system_prompt(replay.requests[-1].json)
    assert RULE not in after
    assert "Tabs, not spaces." in after  # the file that is still there stays
