"""The one hold-until-answered rule every door's chat events pass (LSP, HTTP)."""

from __future__ import annotations

from qodeassist_lsp.core.events import TextEvent
from qodeassist_lsp.features.chat.event_gate import EventGate, Payload


def test_a_send_to_a_chat_holds_that_chat_only_and_keeps_its_order() -> None:
    sent: list[tuple[str, Payload]] = []
    gate = EventGate(lambda chat_id, payload: sent.append((chat_id, payload)))
    token = gate.hold("c1")
    gate.emit("c1", TextEvent("r1", "one"))
    gate.publish("c2", {"kind": "text", "text": "other"})
    gate.emit("c1", TextEvent("r1", "two"))
    assert [(c, p["text"]) for c, p in sent] == [("c2", "other")]
    gate.release(token)
    assert [(c, p["text"]) for c, p in sent] == [("c2", "other"), ("c1", "one"), ("c1", "two")]


def test_a_new_chats_send_holds_every_chat_nobody_follows() -> None:
    sent: list[str] = []
    followed = {"live"}
    gate = EventGate(lambda chat_id, _payload: sent.append(chat_id), followed.__contains__)
    first, second = gate.hold(), gate.hold()
    gate.publish("live", {})
    gate.publish("new", {})
    gate.release(first)
    assert sent == ["live"]  # the second hold still keeps the new chat
    gate.release(second)
    assert sent == ["live", "new"]
