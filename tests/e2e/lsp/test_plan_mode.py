"""Plan mode over stdio: a plan proposed, approved, run step by step, cut by a restart, resumed.

The loopback provider replays the planning answer (a sloppy numbered list), then one answer per
step; step 2 calls ``edit_file`` (auto-applied, so its turn's checkpoint holds the old bytes);
step 3 is held open while the server is stopped, and a second server resumes the plan from the
history file: the step left ``running`` runs again.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp

from tests.e2e.lsp.conftest import serve_from, stop_server
from tests.e2e.lsp.test_chat import Events, held_reply, request, start, start_plain, texts
from tests.e2e.lsp.test_file_edits import AGENT, EDITS, NEW, OLD, tool_call_reply
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply

PLAN = "Here is the plan:\n\n1) **Read** greet.py\n2) Make greet an f-string\n   - keep the name\n3) Report"


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_from(lsp_home, replay, monkeypatch)
    (lsp_home / "config/agents/e2e_tool_chat.toml").write_text(AGENT)
    (lsp_home / "config/pipelines.toml").write_text(
        '[pipelines]\nchat_assistant = ["E2E Tool Chat"]\n'
    )
    (lsp_home / "project/greet.py").write_bytes(OLD.encode())
    (lsp_home / "config/settings.toml").write_text(
        '[tools]\nauto_apply_file_edits = true\n\n[tools.permissions]\nwrite = "allow"\n'
    )


def plans(events: Events) -> list[dict[str, Any]]:
    return [e for e in events.items if e["kind"] == "planUpdated"]


async def plan_state(events: Events, state: str, within: float = 15) -> dict[str, Any]:
    """Wait for a ``planUpdated`` event in ``state``."""

    async def wait() -> dict[str, Any]:
        while True:
            found = [p for p in plans(events) if p["state"] == state]
            if found:
                return found[-1]
            await asyncio.sleep(0.02)

    return await asyncio.wait_for(wait(), within)


async def test_a_plan_runs_step_by_step_and_resumes_after_a_restart(client, lsp_home, replay):
    events = await start(client)
    replay.script("/v1/chat/completions", chat_reply(PLAN))
    sent = await request(client, "chat/send", {"message": "Modernise greet", "mode": "plan"})
    chat_id = sent["chatId"]
    assert (await events.terminal(sent["requestId"]))["kind"] == "finished"
    proposed = await plan_state(events, "proposed")
    assert proposed["requestId"] == sent["requestId"] and proposed["chatId"] == chat_id
    assert [(s["title"], s["status"]) for s in proposed["steps"]] == [
        ("Read greet.py", "pending"),
        ("Make greet an f-string", "pending"),
        ("Report", "pending"),
    ]
    system = replay.requests[0].json["messages"][0]["content"]
    assert "Plan mode" in system and "numbered list" in system
    # The user edits the plan before approving it: the last step gets a clearer title.
    steps = proposed["steps"]
    edited = await request(
        client,
        "chat/plan/update",
        {"chatId": chat_id, "steps": [*steps[:2], {"id": steps[2]["id"], "title": "Report back"}]},
    )
    assert [s["title"] for s in edited["steps"]][2] == "Report back"

    replay.script("/v1/chat/completions", chat_reply("I read it."))
    replay.script(
        "/v1/chat/completions",
        [
            tool_call_reply("call_1", "edit_file", {"path": "greet.py", "edits": EDITS}),
            chat_reply("Changed."),
        ],
    )
    replay.script("/v1/chat/completions", held_reply("Writing the rep"))
    approved = await request(client, "chat/plan/approve", {"chatId": chat_id})
    assert approved["state"] == "running"

    async def third_running() -> dict[str, Any]:
        while True:
            for p in plans(events):
                statuses = [s["status"] for s in p["steps"]]
                if statuses == ["done", "done", "running"] and p["steps"][2].get("requestId"):
                    return p
            await asyncio.sleep(0.02)

    running = await asyncio.wait_for(third_running(), 15)
    third = running["steps"][2]["requestId"]
    await events.first(third, "text")
    second_step = running["steps"][1]
    assert (lsp_home / "project/greet.py").read_bytes() == NEW.encode()
    checkpoints = await request(client, "checkpoints/list", {"chatId": chat_id})
    assert [c["checkpointId"] for c in checkpoints] == [second_step["checkpointId"]]
    assert checkpoints[0]["requestId"] == second_step["requestId"]
    step_message = replay.requests[2].json["messages"][-1]["content"]
    assert step_message.startswith("Carry out step 2 of 3 of the plan: Make greet an f-string")
    assert "1. [x] Read greet.py" in step_message

    await stop_server(client)  # mid-plan: step 3 is streaming
    stored = json.loads((lsp_home / "data/chat_history" / f"{chat_id}.json").read_text())
    assert [s["status"] for s in stored["plan"]["steps"]] == ["done", "done", "running"]

    second = pytest_lsp.make_test_lsp_client()
    await second.start_io(sys.executable, "-m", "qodeassist_lsp")
    try:
        events = await start_plain(second, lsp_home)
        chat = await request(second, "chat/get", {"chatId": chat_id})
        assert chat["plan"]["steps"][2]["status"] == "running"
        replay.script("/v1/chat/completions", chat_reply("All done."))
        resumed = await request(second, "chat/plan/resume", {"chatId": chat_id})
        assert [s["status"] for s in resumed["steps"]] == ["done", "done", "pending"]
        done = await plan_state(events, "done")
        assert [s["status"] for s in done["steps"]] == ["done", "done", "done"]
        last = done["steps"][2]["requestId"]
        assert last != third and texts(events.of(last)) == "All done."
        assert replay.last.json["messages"][-1]["content"].startswith(
            "Carry out step 3 of 3 of the plan: Report back"
        )
        # The checkpoint of step 2 gives the old bytes back.
        restored = await request(
            second, "checkpoints/restore", {"checkpointId": second_step["checkpointId"]}
        )
        assert len(restored["restored"]) == 1
        assert (lsp_home / "project/greet.py").read_bytes() == OLD.encode()
    finally:
        await stop_server(second)


async def test_an_answer_without_a_plan_is_an_invalid_plan_event(client, replay):
    events = await start(client)
    replay.script("/v1/chat/completions", chat_reply("I would simply do it."))
    sent = await request(client, "chat/send", {"message": "Do it", "mode": "plan"})
    assert (await events.terminal(sent["requestId"]))["kind"] == "finished"
    invalid = await plan_state(events, "invalid")
    assert invalid["steps"] == [] and invalid["error"]["category"] == "validation"
    assert "not a plan" in invalid["error"]["message"]
    chat = await request(client, "chat/get", {"chatId": sent["chatId"]})
    assert chat["messages"][-1]["blocks"][0]["text"] == "I would simply do it."
    with pytest.raises(Exception, match="has no plan"):
        await request(client, "chat/plan/approve", {"chatId": sent["chatId"]})
