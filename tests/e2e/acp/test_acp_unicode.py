"""Text that is not Latin-1 through ``qodeassist-lsp acp``: prompts, answers, titles, session ids.

Cyrillic, CJK, right-to-left scripts, emoji (with skin tones and joiners), combining marks and
NUL reach the model exactly as sent, come back exactly as streamed, survive the history file
(``session/list`` titles, ``session/load`` replays), and as session ids get clear errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from tests.e2e.acp.conftest import Editor, running_agent
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply

ROUTE = "/v1/chat/completions"
FIRST = "Привет, мир. 你好，世界。 こんにちは 안녕하세요 שלום עולם مرحبا بالعالم"
SECOND = "Emoji 🙂👍🏽👨‍👩‍👧 café (e\u0301) Z\u0335\u0321a\u0336lgo and a NUL: [\u0000]"
IDS = ["сессия", "会话-你好", "שיחה-مرحبا", "🙂👨‍👩‍👧", "e\u0301", "nul\u0000id", "../outside"]


def user_text(request_json: dict[str, Any]) -> str:
    """The text of the last user message the model was sent."""
    content = [m for m in request_json["messages"] if m["role"] == "user"][-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


async def test_unicode_prompts_answers_titles_and_replays_are_exact(
    acp_home: Path, replay: ReplayServer
) -> None:
    replay.script(ROUTE, chat_reply("Ответ: ", "答え 🙂 ", "שלום e\u0301 [\u0000]"))
    editor = Editor()
    cwd = str(acp_home / "project")
    async with running_agent(acp_home, editor) as conn:
        session = await conn.new_session(cwd=cwd, mcp_servers=[])
        answer = await conn.prompt(
            session_id=session.session_id, prompt=[text_block(FIRST), text_block(SECOND)]
        )
    assert answer.stop_reason == "end_turn"
    # Two text blocks are two paragraphs, each exactly as typed.
    assert user_text(replay.last.json) == f"{FIRST}\n\n{SECOND}"
    assert editor.text() == "Ответ: 答え 🙂 שלום e\u0301 [\u0000]"

    loaded = Editor()
    async with running_agent(acp_home, loaded) as conn:
        listed = await conn.list_sessions(cwd=cwd)
        assert [s.title for s in listed.sessions] == [FIRST[:80]]
        await conn.load_session(cwd=cwd, session_id=session.session_id, mcp_servers=[])
    assert loaded.text("user_message_chunk") == f"{FIRST}\n\n{SECOND}"
    assert loaded.text() == "Ответ: 答え 🙂 שלום e\u0301 [\u0000]"


async def test_unicode_session_ids_that_do_not_exist_get_clear_errors(acp_home: Path) -> None:
    cwd = str(acp_home / "project")
    async with running_agent(acp_home, Editor()) as conn:
        for session_id in IDS:
            with pytest.raises(RequestError) as prompted:
                await conn.prompt(session_id=session_id, prompt=[text_block(FIRST)])
            assert prompted.value.code == -32602, session_id
            assert "no session" in str(prompted.value.data)
            with pytest.raises(RequestError) as loaded:
                await conn.load_session(cwd=cwd, session_id=session_id, mcp_servers=[])
            assert loaded.value.code == -32602, session_id
            assert "no chat" in str(loaded.value.data)
        # The agent is still serving: a new session works.
        assert (await conn.new_session(cwd=cwd, mcp_servers=[])).session_id
