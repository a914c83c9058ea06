"""``qodeassist-lsp acp`` over stdio: initialize, sessions, streamed turns, modes, load, cancel.

The SDK's client (`conftest.Editor`) drives the real agent process; the chat agents talk to a
loopback replay provider (OpenAI chat-completions streams).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import (
    PROTOCOL_VERSION,
    RequestError,
    embedded_text_resource,
    image_block,
    resource_block,
    resource_link_block,
    text_block,
)

from tests.e2e.acp.conftest import Editor, running_agent
from tests.e2e.lsp.test_skills import write_skill
from tests.support.replay_server import ReplayServer, Reply
from tests.support.streams import chat_reply, chat_sse

ROUTE = "/v1/chat/completions"


async def test_initialize_announces_version_load_and_prompt_capabilities(acp_home: Path) -> None:
    from acp import spawn_agent_process
    from acp.schema import ClientCapabilities

    from tests.e2e.acp.conftest import agent_env

    async with spawn_agent_process(
        Editor(), __import__("sys").executable, "-m", "qodeassist_lsp", "acp",
        env=agent_env(acp_home), cwd=str(acp_home / "project"),
    ) as (conn, _process):  # fmt: skip
        answer = await conn.initialize(
            protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities()
        )
    assert answer.protocol_version == 1
    caps = answer.agent_capabilities
    assert caps is not None and caps.load_session is True
    assert caps.prompt_capabilities is not None and caps.prompt_capabilities.embedded_context
    assert caps.prompt_capabilities.image is True
    assert caps.mcp_capabilities is not None and caps.mcp_capabilities.http
    assert answer.auth_methods == []
    assert answer.agent_info is not None and answer.agent_info.name == "qodeassist-lsp"


async def test_a_prompt_streams_the_answer_and_ends_the_turn(
    acp_home: Path, replay: ReplayServer
) -> None:
    (acp_home / "project/notes.txt").write_text("remember the milk\n")
    replay.script(ROUTE, chat_reply("Hello", ", world"))
    editor = Editor()
    async with running_agent(acp_home, editor) as conn:
        session = await conn.new_session(cwd=str(acp_home / "project"), mcp_servers=[])
        assert session.modes is not None
        assert session.modes.current_mode_id == "E2E Tool Chat"
        modes = [m.id for m in session.modes.available_modes]
        assert modes == ["E2E Tool Chat", "E2E Other Chat", "plan"]
        notes = (acp_home / "project/notes.txt").as_uri()
        answer = await conn.prompt(
            session_id=session.session_id,
            prompt=[
                text_block("Summarise these"),
                resource_link_block("notes.txt", notes),
                resource_block(embedded_text_resource("file:///draft.md", "# unsaved draft")),
            ],
        )
    assert answer.stop_reason == "end_turn"
    assert editor.text() == "Hello, world"
    assert all(s == session.session_id for s, _u in editor.updates)
    sent = str(replay.last.json["messages"])
    assert "Summarise these" in sent and "# unsaved draft" in sent
    assert "remember the milk" in sent  # the resource link became an attachment


PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="
"""A 1×1 PNG, as a client pastes a screenshot."""


async def test_an_image_goes_to_the_model_and_an_unknown_type_is_refused(
    acp_home: Path, replay: ReplayServer
) -> None:
    replay.script(ROUTE, chat_reply("A single pixel."))
    editor = Editor()
    async with running_agent(acp_home, editor) as conn:
        session = await conn.new_session(cwd=str(acp_home / "project"), mcp_servers=[])
        answer = await conn.prompt(
            session_id=session.session_id,
            prompt=[text_block("What is this?"), image_block(PIXEL, "image/png")],
        )
        with pytest.raises(RequestError) as refused:
            await conn.prompt(
                session_id=session.session_id,
                prompt=[text_block("And this?"), image_block("SUkqAA==", "image/tiff")],
            )
    assert answer.stop_reason == "end_turn" and editor.text() == "A single pixel."
    assert len(replay.requests) == 1  # the refused prompt reached no model
    user = [m for m in replay.last.json["messages"] if m["role"] == "user"][-1]
    parts = {part["type"]: part for part in user["content"]}
    assert parts["text"]["text"].startswith("What is this?")
    assert parts["image_url"]["image_url"]["url"] == f"data:image/png;base64,{PIXEL}"
    assert refused.value.code == -32602 and "image/tiff" in str(refused.value.data)


async def test_modes_choose_the_chat_agent(acp_home: Path, replay: ReplayServer) -> None:
    replay.script(ROUTE, [chat_reply("one"), chat_reply("two")])
    editor = Editor()
    async with running_agent(acp_home, editor) as conn:
        session = await conn.new_session(cwd=str(acp_home / "project"), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        first = replay.last.json
        await conn.set_session_mode(session_id=session.session_id, mode_id="E2E Other Chat")
        await conn.prompt(session_id=session.session_id, prompt=[text_block("again")])
        second = replay.last.json
        with pytest.raises(RequestError) as refused:
            await conn.set_session_mode(session_id=session.session_id, mode_id="Nope")
    assert first.get("model") != "other" and second["model"] == "other"
    assert "E2E Tool Chat" in str(refused.value.data)
    assert [u.current_mode_id for u in editor.of_kind("current_mode_update")] == ["E2E Other Chat"]
    # The second turn carried the first one: one conversation across agents.
    assert "hi" in str(second["messages"]) and "one" in str(second["messages"])


async def test_skills_are_slash_commands(acp_home: Path, replay: ReplayServer) -> None:
    write_skill(acp_home / "config/skills", "haiku", "Answer in haiku", "Always answer in haiku.")
    replay.script(ROUTE, chat_reply("Old pond"))
    editor = Editor()
    async with running_agent(acp_home, editor) as conn:
        session = await conn.new_session(cwd=str(acp_home / "project"), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("/haiku the sea")])
    commands = editor.of_kind("available_commands_update")
    assert [c.name for c in commands[0].available_commands] == ["haiku"]
    assert commands[0].available_commands[0].description == "Answer in haiku"
    assert "Always answer in haiku." in str(replay.last.json["messages"])


async def test_load_replays_a_stored_chat_and_list_shows_it(
    acp_home: Path, replay: ReplayServer
) -> None:
    replay.script(ROUTE, chat_reply("Stored answer"))
    async with running_agent(acp_home, Editor()) as conn:
        session = await conn.new_session(cwd=str(acp_home / "project"), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("Stored question")])
    editor = Editor()
    async with running_agent(acp_home, editor) as conn:
        listed = await conn.list_sessions(cwd=str(acp_home / "project"))
        assert [s.session_id for s in listed.sessions] == [session.session_id]
        assert listed.sessions[0].title == "Stored question"
        loaded = await conn.load_session(
            cwd=str(acp_home / "project"), session_id=session.session_id, mcp_servers=[]
        )
        assert loaded.modes is not None
        assert editor.text("user_message_chunk") == "Stored question"
        assert editor.text() == "Stored answer"
        replay.script(ROUTE, chat_reply("Continued"))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("More")])
    assert "Stored question" in str(replay.last.json["messages"])
    # The history file is the LSP chat's: same folder, same id.
    assert (acp_home / f"data/chat_history/{session.session_id}.json").exists()


async def test_cancel_ends_the_turn_and_closes_the_upstream_stream(
    acp_home: Path, replay: ReplayServer
) -> None:
    replay.script(ROUTE, Reply(body=chat_sse("partial")[:60], hold_open=True,
                               content_type="text/event-stream"))  # fmt: skip
    editor = Editor()
    async with running_agent(acp_home, editor) as conn:
        session = await conn.new_session(cwd=str(acp_home / "project"), mcp_servers=[])
        turn = asyncio.create_task(
            conn.prompt(session_id=session.session_id, prompt=[text_block("go on")])
        )
        [upstream] = await replay.wait_for_requests_async(1)
        assert await upstream.wait_holding_async(10)
        await conn.cancel(session_id=session.session_id)
        answer = await asyncio.wait_for(turn, 10)
        assert answer.stop_reason == "cancelled"
        assert await upstream.wait_disconnected_async(5)


async def test_max_tokens_is_the_stop_reason_of_a_cut_answer(
    acp_home: Path, replay: ReplayServer
) -> None:
    body = chat_sse("cut").replace(b'"finish_reason": "stop"', b'"finish_reason": "length"')
    replay.script(ROUTE, Reply(body=body, content_type="text/event-stream"))
    async with running_agent(acp_home, Editor()) as conn:
        session = await conn.new_session(cwd=str(acp_home / "project"), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("long")])
    assert answer.stop_reason == "max_tokens"


async def test_with_a_router_configured_auto_is_the_default_mode_and_routes(
    acp_home: Path, replay: ReplayServer
) -> None:
    pipelines = acp_home / "config/pipelines.toml"
    pipelines.write_text(pipelines.read_text() + 'chat_router = "Embedded Router"\n')
    replay.script(
        ROUTE,
        [chat_reply('{"agent": "E2E Other Chat", "reason": "short"}'), chat_reply("routed")],
    )
    editor = Editor()
    async with running_agent(acp_home, editor) as conn:
        session = await conn.new_session(cwd=str(acp_home / "project"), mcp_servers=[])
        assert session.modes is not None and session.modes.current_mode_id == "auto"
        assert [m.id for m in session.modes.available_modes][-2:] == ["auto", "plan"]
        await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        await conn.set_session_mode(session_id=session.session_id, mode_id="E2E Tool Chat")
        await conn.set_session_mode(session_id=session.session_id, mode_id="auto")
    assert editor.text() == "routed"
    router, answer = (r.json for r in replay.requests)
    assert "E2E Other Chat" in str(router["messages"]) and answer["model"] == "other"
