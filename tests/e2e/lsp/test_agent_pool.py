"""``agent: {"requires": …}`` over stdio: the pool picks by requirements and queues when busy."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.e2e.lsp.conftest import serve_from
from tests.e2e.lsp.test_chat import CLAUDE_PROVIDER, request, start, texts
from tests.support.replay_server import ReplayServer, Reply
from tests.support.streams import chat_reply

PIPELINES = """[pipelines]
chat_assistant = ["Embedded Chat", "Claude Chat — Sonnet"]
"""
CLAUDE = "Claude Chat — Sonnet"
EMBEDDED = "Embedded Chat"


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_from(lsp_home, replay, monkeypatch, {"ANTHROPIC_API_KEY": "e2e-key"})
    (lsp_home / "config/providers/claude.toml").write_text(CLAUDE_PROVIDER.format(url=replay.url))
    (lsp_home / "config/pipelines.toml").write_text(PIPELINES)


async def test_the_agent_meeting_the_requirements_serves_and_says_so(client, replay) -> None:
    events = await start(client)
    replay.script("/v1/messages", Reply(fixture="anthropic/stream_thinking_signature_text.sse"))
    sent = await request(
        client, "chat/send", {"message": "Use tools", "agent": {"requires": {"tools": True}}}
    )
    assert sent["agent"] == CLAUDE
    assert (await events.terminal(sent["requestId"]))["kind"] == "finished"
    chosen = events.of(sent["requestId"])[0]
    assert chosen["kind"] == "agentChosen" and chosen["agent"] == CLAUDE
    assert chosen["reason"] == f"pool: {CLAUDE} meets tools" and chosen["fallback"] is False
    assert [r.path for r in replay.requests] == ["/v1/messages"]


async def test_a_second_request_queues_until_the_only_matching_agent_is_free(
    client, replay
) -> None:
    events = await start(client)
    # Only the Embedded Chat declares a context size; its local instance serves one at a time.
    wanted = {"requires": {"minContext": 4000, "local": True}}
    replay.script("/v1/chat/completions", chat_reply("First", first_byte_delay=1.5))
    replay.script("/v1/chat/completions", chat_reply("Second"))
    first = await request(client, "chat/send", {"message": "One", "agent": wanted})
    assert first["agent"] == EMBEDDED
    second = asyncio.create_task(request(client, "chat/send", {"message": "Two", "agent": wanted}))
    await asyncio.sleep(0.7)
    assert not second.done(), "the second request must wait for the busy agent"
    assert len(replay.requests) == 1
    assert (await events.terminal(first["requestId"]))["kind"] == "finished"
    queued = await asyncio.wait_for(second, 10)
    assert queued["agent"] == EMBEDDED and queued["chatId"] != first["chatId"]
    assert (await events.terminal(queued["requestId"]))["kind"] == "finished"
    streamed = events.of(queued["requestId"])
    assert streamed[0]["kind"] == "agentChosen" and "queued" in streamed[0]["reason"]
    assert texts(streamed) == "Second"
    assert [r.json["messages"][-1]["content"] for r in replay.requests] == ["One", "Two"]


async def test_requirements_no_agent_meets_are_refused_with_what_each_lacks(client) -> None:
    await start(client)
    wanted = {"requires": {"local": True, "tags": ["rust"]}}
    with pytest.raises(Exception, match="Embedded Chat lacks tag 'rust'"):
        await request(client, "chat/send", {"message": "x", "agent": wanted})
    with pytest.raises(Exception, match="unknown key"):
        await request(client, "chat/send", {"message": "x", "agent": {"requires": {"gpu": 1}}})
