"""Plan mode through ``qodeassist-lsp acp``: the ``plan`` mode plans, then runs the steps.

The plan arrives as ACP ``plan`` session updates (entries pending → in_progress → completed),
each step is a chat turn of its own in the same prompt turn, and the turn ends ``end_turn`` once
the last step is done.
"""

from __future__ import annotations

from pathlib import Path

from acp import text_block

from tests.e2e.acp.conftest import Editor, running_agent
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply

ROUTE = "/v1/chat/completions"


async def test_plan_mode_streams_plan_updates_and_runs_every_step(
    acp_home: Path, replay: ReplayServer
) -> None:
    replay.script(ROUTE, chat_reply("1. Look around\n2. Say hello"))
    replay.script(ROUTE, [chat_reply("Looked."), chat_reply("Hello!")])
    editor = Editor()
    async with running_agent(acp_home, editor) as conn:
        session = await conn.new_session(cwd=str(acp_home / "project"), mcp_servers=[])
        assert session.modes is not None
        assert session.modes.available_modes[-1].id == "plan"
        await conn.set_session_mode(session_id=session.session_id, mode_id="plan")
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("Greet")])
        plans = [[(e.content, e.status) for e in u.entries] for u in editor.of_kind("plan")]
        editor.updates.clear()
        # session/load replays the chat and then its plan.
        await conn.load_session(
            cwd=str(acp_home / "project"), session_id=session.session_id, mcp_servers=[]
        )
        [replayed] = editor.of_kind("plan")
    assert answer.stop_reason == "end_turn"
    assert [(e.content, e.status) for e in replayed.entries] == plans[-1]
    assert plans[0] == [("Look around", "pending"), ("Say hello", "pending")]
    assert [("Look around", "in_progress"), ("Say hello", "pending")] in plans
    assert [("Look around", "completed"), ("Say hello", "in_progress")] in plans
    assert plans[-1] == [("Look around", "completed"), ("Say hello", "completed")]
    sent = [r.json["messages"][-1]["content"] for r in replay.requests]
    assert sent[0] == "Greet" and "Plan mode" in replay.requests[0].json["messages"][0]["content"]
    assert sent[2].startswith("Carry out step 2 of 2 of the plan: Say hello")


async def test_an_answer_without_a_plan_ends_the_turn_with_a_note(
    acp_home: Path, replay: ReplayServer
) -> None:
    replay.script(ROUTE, chat_reply("I just did it."))
    editor = Editor()
    async with running_agent(acp_home, editor) as conn:
        session = await conn.new_session(cwd=str(acp_home / "project"), mcp_servers=[])
        await conn.set_session_mode(session_id=session.session_id, mode_id="plan")
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("Go")])
    assert answer.stop_reason == "end_turn"
    assert editor.of_kind("plan") == []
    assert editor.text().startswith("I just did it.") and "[No plan: " in editor.text()
    assert len(replay.requests) == 1
