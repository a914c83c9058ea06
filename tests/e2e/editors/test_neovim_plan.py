"""Plan mode in the Neovim chat, against the real server: the plan as a checklist, approved."""

from __future__ import annotations

import pytest

from tests.e2e.editors.conftest import RunPlugin
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply

ROUTE = "/v1/chat/completions"


@pytest.mark.parametrize("version", [pytest.param("0.12", id="0.12")])
def test_the_plan_is_a_checklist_and_approve_runs_it(
    plugin: RunPlugin, replay: ReplayServer, version: str
) -> None:
    replay.script(ROUTE, chat_reply("Plan:\n1. Look around\n2. Say hi"))
    replay.script(ROUTE, [chat_reply("Looked."), chat_reply("Hi!")])
    run = plugin("plugin_plan", version, message="Greet")
    why = run.explain()

    [send] = run.requests("qodeassist/chat/send")
    assert send["params"]["mode"] == "plan", why
    chat_id = send["result"]["chatId"]
    proposed = run.snapshot("proposed")["chat_lines"]
    assert proposed[-4:] == [
        "**Plan** · proposed",
        "[ ] 1. Look around",
        "[ ] 2. Say hi",
        "_:QodeAssistPlanApprove runs it · :QodeAssistPlanCancel stops it_",
    ], why
    [approve] = run.requests("qodeassist/chat/plan/approve")
    assert approve["params"] == {"chatId": chat_id}, why
    done = run.snapshot("done")["chat_lines"]
    start = done.index("**Plan** · done")
    assert done[start : start + 3] == ["**Plan** · done", "[x] 1. Look around", "[x] 2. Say hi"]
    assert done.count("**Plan** · done") == 1, why  # rewritten in place, not appended
    after = done[start + 3 :]
    assert "## Step 1: Look around" in after and "## Step 2: Say hi" in after, why
    assert after.index("Looked.") < after.index("## Step 2: Say hi") < after.index("Hi!"), why
    reopened = run.snapshot("reopened")["chat_lines"]
    start = reopened.index("**Plan** · done")
    assert reopened[start : start + 3] == done[done.index("**Plan** · done") :][:3], why
    assert reopened[-3:] == ["**Plan** · done", "[x] 1. Look around", "[x] 2. Say hi"], why
