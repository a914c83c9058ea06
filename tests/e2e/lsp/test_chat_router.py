"""``agent: "auto"`` over stdio: the router's pick answers, sticks, and failures fall back."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from tests.e2e.lsp.conftest import serve_from
from tests.e2e.lsp.test_chat import CLAUDE_PROVIDER, request, start, texts
from tests.support.replay_server import ReplayServer, Reply
from tests.support.streams import chat_reply

ROUTER = "Embedded Router"
PIPELINES = """[pipelines]
chat_assistant = ["Embedded Chat", "Claude Chat — Sonnet"]
chat_router = "Embedded Router"
"""
CLAUDE = "Claude Chat — Sonnet"


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_from(lsp_home, replay, monkeypatch, {"ANTHROPIC_API_KEY": "e2e-key"})
    (lsp_home / "config/providers/claude.toml").write_text(CLAUDE_PROVIDER.format(url=replay.url))
    (lsp_home / "config/pipelines.toml").write_text(PIPELINES)
    (lsp_home / "config/settings.toml").write_text("[chat]\nrouter_timeout_ms = 5000\n")


def paths(replay: ReplayServer) -> list[str]:
    return [r.path for r in replay.requests]


async def test_auto_sends_to_the_agent_the_router_chose_and_sticks(client, replay) -> None:
    events = await start(client)
    picker = await request(client, "agents/list", {"pipeline": "chatAssistant"})
    assert [a["name"] for a in picker] == ["Embedded Chat", CLAUDE, "auto"]
    replay.script(
        "/v1/chat/completions",
        chat_reply('Sure: {"agent": "claude chat — sonnet", ', '"reason": "It needs depth."}'),
    )
    replay.script("/v1/messages", Reply(fixture="anthropic/stream_thinking_signature_text.sse"))
    sent = await request(client, "chat/send", {"message": "Prove it", "agent": "auto"})
    assert sent["agent"] == CLAUDE
    assert (await events.terminal(sent["requestId"]))["kind"] == "finished"
    first = events.of(sent["requestId"])[0]
    assert first["kind"] == "agentChosen"
    assert (first["agent"], first["reason"], first["fallback"]) == (
        CLAUDE,
        "It needs depth.",
        False,
    )
    assert paths(replay) == ["/v1/chat/completions", "/v1/messages"]
    routed = str(replay.requests[0].json["messages"])
    assert "- Claude Chat — Sonnet:" in routed and "Prove it" in routed and '"agent"' in routed
    # The choice is stored with the chat: the next message goes to the same agent, unrouted.
    replay.script("/v1/messages", Reply(fixture="anthropic/stream_thinking_signature_text.sse"))
    again = await request(client, "chat/send", {"message": "More", "chatId": sent["chatId"]})
    assert (await events.terminal(again["requestId"]))["kind"] == "finished"
    assert paths(replay)[2:] == ["/v1/messages"]
    assert all(e["kind"] != "agentChosen" for e in events.of(again["requestId"]))
    chat = await request(client, "chat/get", {"chatId": sent["chatId"]})
    assert chat["agent"] == CLAUDE


@pytest.mark.parametrize(
    ("router_reply", "why"),
    [
        (Reply.json({"error": {"message": "boom"}}, status=500), "failed"),
        (chat_reply("Claude, I guess"), "named no chat agent"),
        (chat_reply('{"agent": "GPT-9", "reason": "best"}'), "named no chat agent"),
        (chat_reply('{"agent": "Claude Chat — Sonnet"}', first_byte_delay=8), "did not answer"),
    ],
    ids=["http-500", "malformed", "unknown-agent", "late"],
)
async def test_a_failed_or_late_router_falls_back_to_the_first_chat_agent(
    client, replay, router_reply: Reply, why: str
) -> None:
    events = await start(client)
    replay.script("/v1/chat/completions", router_reply)
    replay.script("/v1/chat/completions", chat_reply("Fallback answer"))
    sent = await request(client, "chat/send", {"message": "Hello", "agent": "auto"})
    assert sent["agent"] == "Embedded Chat"
    assert (await events.terminal(sent["requestId"]))["kind"] == "finished"
    streamed = events.of(sent["requestId"])
    chosen = streamed[0]
    assert chosen["kind"] == "agentChosen" and chosen["agent"] == "Embedded Chat"
    assert chosen["fallback"] is True and why in chosen["reason"] and ROUTER in chosen["reason"]
    assert texts(streamed) == "Fallback answer"
    assert replay.last.json["messages"][-1]["content"] == "Hello"


async def test_auto_is_refused_when_the_router_named_is_not_loaded(
    client, lsp_home, replay
) -> None:
    # As ACP's modes and the HTTP API's models: no loaded chat_router agent, no `auto`.
    (lsp_home / "config/pipelines.toml").write_text(PIPELINES.replace(ROUTER, "Gone Router"))
    await start(client)
    picker = await request(client, "agents/list", {"pipeline": "chatAssistant"})
    assert [a["name"] for a in picker] == ["Embedded Chat", CLAUDE]
    with pytest.raises(JsonRpcInvalidParams, match="needs a chat_router agent"):
        await request(client, "chat/send", {"message": "Hello", "agent": "auto"})
    assert replay.requests == []
