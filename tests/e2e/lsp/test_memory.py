"""Memory over stdio: ``/remember`` in one chat reaches the next chat's request; secrets refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from tests.e2e.lsp.conftest import serve_from
from tests.e2e.lsp.test_chat import request, start, texts
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_from(lsp_home, replay, monkeypatch)


async def test_remember_in_one_chat_reaches_the_next_chats_request(client, lsp_home, replay):
    events = await start(client)
    sent = await request(
        client, "chat/send", {"message": "/remember --project Deploys go through staging first"}
    )
    terminal = await events.terminal(sent["requestId"])
    assert terminal["kind"] == "finished"
    confirmation = texts(events.of(sent["requestId"]))
    assert confirmation.startswith("Remembered (project memory, id ")
    assert replay.requests == []  # no model call
    stored = json.loads((lsp_home / "project/.qodeassist/memory.json").read_text())
    [entry] = stored["entries"]
    assert (entry["text"], entry["source"]) == ("Deploys go through staging first", "chat")
    chat = await request(client, "chat/get", {"chatId": sent["chatId"]})
    assert [m["role"] for m in chat["messages"]] == ["user", "assistant"]
    await request(client, "chat/send", {"message": "/remember I like short answers"})

    replay.script("/v1/chat/completions", chat_reply("Staging, then production."))
    other = await request(client, "chat/send", {"message": "How do deploys reach production?"})
    assert (await events.terminal(other["requestId"]))["kind"] == "finished"
    system = replay.last.json["messages"][0]["content"]
    assert "# Memory" in system
    assert "- Deploys go through staging first" in system and "- I like short answers" in system


async def test_a_secret_is_refused_and_nothing_is_stored(client, lsp_home, replay):
    await start(client)
    with pytest.raises(JsonRpcInvalidParams, match="looks like a secret"):
        await request(
            client, "chat/send", {"message": "/remember my key is sk-abcdefghijklmnopqrstuvwx"}
        )
    assert not (lsp_home / "data/memory.json").exists()
    assert await request(client, "chat/list", {}) == []
    assert replay.requests == []
