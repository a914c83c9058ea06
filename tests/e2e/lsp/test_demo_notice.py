"""A chat answered by the offline demo model says so, once per chat, in text clients render."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.lsp.conftest import serve_from
from tests.e2e.lsp.test_chat import request, start, texts
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply, embedded_instance


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_from(lsp_home, replay, monkeypatch)
    # The bundled Embedded Instruct instance, pointed at the replay server: still the demo model.
    demo = embedded_instance(replay.url, "Embedded Instruct") + "demo = true\n"
    (lsp_home / "config/providers/embedded_instruct.toml").write_text(demo)


async def test_the_first_answer_of_a_demo_chat_says_it_is_a_demo(client, replay) -> None:
    events = await start(client)
    replay.script("/v1/chat/completions", chat_reply("Hello!"))
    sent = await request(client, "chat/send", {"message": "hi"})
    assert (await events.terminal(sent["requestId"]))["kind"] == "finished"
    first = events.of(sent["requestId"])
    assert first[0]["kind"] == "text"
    notice = first[0]["text"]
    assert "offline demo model" in notice and "`qodeassist-lsp setup`" in notice
    assert texts(first) == notice + "Hello!"

    # Once per chat; and never part of the history the model reads back.
    replay.script("/v1/chat/completions", chat_reply("Bye!"))
    again = await request(client, "chat/send", {"chatId": sent["chatId"], "message": "bye"})
    assert (await events.terminal(again["requestId"]))["kind"] == "finished"
    assert texts(events.of(again["requestId"])) == "Bye!"
    sent_messages = replay.last.json["messages"]
    assert all("demo model" not in str(m["content"]) for m in sent_messages)
    chat = await request(client, "chat/get", {"chatId": sent["chatId"]})
    assert "demo model" not in str(chat["messages"])


async def test_a_chat_on_a_real_provider_has_no_notice(client, lsp_home, replay) -> None:
    (lsp_home / "config/agent_models.json").write_text(
        '{"Embedded Chat": {"provider_instance": "Embedded"}}'
    )
    events = await start(client)
    replay.script("/v1/chat/completions", chat_reply("Hello!"))
    sent = await request(client, "chat/send", {"message": "hi"})
    assert (await events.terminal(sent["requestId"]))["kind"] == "finished"
    assert texts(events.of(sent["requestId"])) == "Hello!"
