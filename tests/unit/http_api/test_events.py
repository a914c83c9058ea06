from __future__ import annotations

import asyncio

from qodeassist_lsp.core.events import TextEvent
from qodeassist_lsp.http_api.events import EventHub, Questions


def test_held_payloads_arrive_once_the_stream_subscribes() -> None:
    hub = EventHub()
    seen: list[dict[str, object]] = []
    token = hub.hold()
    hub.emit("c1", TextEvent("r1", "early"))
    assert seen == []
    unsubscribe = hub.subscribe("c1", seen.append)
    assert [p["text"] for p in seen] == ["early"]
    hub.release(token)
    assert len(seen) == 1
    hub.publish("c2", {"kind": "text"})  # another chat
    unsubscribe()
    hub.publish("c1", {"kind": "text"})
    assert len(seen) == 1 and not hub.has_subscribers("c1")


def test_a_waiting_send_does_not_hold_the_chats_other_streams_follow() -> None:
    hub = EventHub()
    followed: list[dict[str, object]] = []
    hub.subscribe("c1", followed.append)
    waiting = hub.hold()  # a new chat's send, waiting for a busy agent pool
    hub.publish("c1", {"kind": "text", "text": "live"})
    assert [p["text"] for p in followed] == ["live"]
    hub.publish("new", {"kind": "text", "text": "first"})  # nobody follows it yet: held
    again = hub.hold("c1")  # a send continuing c1 holds only c1
    hub.publish("c1", {"kind": "text", "text": "next turn"})
    hub.publish("c1", {"kind": "text", "text": "then"})
    assert len(followed) == 1
    hub.release(again)
    assert [p["text"] for p in followed] == ["live", "next turn", "then"]
    fresh: list[dict[str, object]] = []
    hub.subscribe("new", fresh.append)
    hub.release(waiting)
    assert [p["text"] for p in fresh] == ["first"]


def test_a_stream_gets_its_own_requests_events_not_the_previous_answers() -> None:
    hub = EventHub()
    first: list[dict[str, object]] = []
    second: list[dict[str, object]] = []
    hub.subscribe("c1", first.append, "r1")
    hub.emit("c1", TextEvent("r1", "one"))
    token = hub.hold("c1")  # the next message of c1 is on its way
    hub.publish("c1", {"kind": "finished", "requestId": "r1"})  # r1's end, held meanwhile
    hub.emit("c1", TextEvent("r2", "two"))
    hub.subscribe("c1", second.append, "r2")
    hub.release(token)
    hub.publish("c1", {"kind": "permission", "questionId": "q1"})  # names no request: both
    assert [p["kind"] for p in first] == ["text", "finished", "permission"]
    assert [(p["kind"], p.get("text")) for p in second] == [("text", "two"), ("permission", None)]


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
