from __future__ import annotations

import asyncio

from qodeassist_lsp.core.events import TextEvent
from qodeassist_lsp.http_api.events import EventHub, Questions


def test_held_payloads_arrive_after_the_release() -> None:
    hub = EventHub()
    seen: list[dict[str, object]] = []
    hub.hold()
    hub.publish_event("c1", TextEvent("r1", "early"))
    unsubscribe = hub.subscribe("c1", seen.append)
    assert seen == []
    hub.release()
    assert [p["text"] for p in seen] == ["early"]
    hub.publish("c2", {"kind": "text"})  # another chat
    unsubscribe()
    hub.publish("c1", {"kind": "text"})
    assert len(seen) == 1 and not hub.has_subscribers("c1")


async def test_a_question_is_shown_in_the_stream_and_answered() -> None:
    hub = EventHub()
    questions = Questions(hub)
    shown: list[dict[str, object]] = []
    hub.subscribe("c1", shown.append)
    asking = asyncio.create_task(questions.ask("c1", "May I?", ["Allow once", "Deny"]))
    await asyncio.sleep(0)
    [question] = shown
    assert question["kind"] == "permission" and question["actions"] == ["Allow once", "Deny"]
    assert not questions.answer(str(question["questionId"]), "Sure")  # not one of the actions
    assert questions.answer(str(question["questionId"]), "Deny")
    assert await asking == "Deny"
    assert not questions.answer(str(question["questionId"]), "Deny")  # settled


async def test_nobody_to_ask_or_no_answer_in_time_is_none() -> None:
    hub = EventHub()
    assert await Questions(hub).ask("nobody", "May I?", ["Allow once"]) is None
    hub.subscribe("c1", lambda payload: None)
    assert await Questions(hub, timeout=0.01).ask("c1", "May I?", ["Allow once"]) is None
