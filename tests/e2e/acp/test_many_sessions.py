"""Many ACP sessions at once: each its own chat id, its own updates and its own history file.

The replay provider hands its scripted answers to the requests in the order they arrive, so the
check is that every answer reached exactly one session, whole, and that each session's history
holds its own prompt and the answer its client was sent — nothing of another session's.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from acp import text_block

from tests.e2e.acp.conftest import Editor, running_agent
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply

ROUTE = "/v1/chat/completions"
SESSIONS = 10


def answer_parts(n: int) -> list[str]:
    return [f"Answer {n}", " to", " its", " own", " prompt."]


def saved(home: Path, chat_id: str) -> list[tuple[str, str]]:
    """The (role, text) of every message in the chat's history file."""
    data = json.loads((home / "data/chat_history" / f"{chat_id}.json").read_text())
    return [(m["role"], "".join(b.get("text", "") for b in m["blocks"])) for m in data["messages"]]


async def test_ten_sessions_opened_at_once_are_ten_chats_that_do_not_mix(
    acp_home: Path, replay: ReplayServer
) -> None:
    replay.script(ROUTE, [chat_reply(*answer_parts(n), split="events") for n in range(SESSIONS)])
    editor = Editor()
    cwd = str(acp_home / "project")
    async with running_agent(acp_home, editor) as conn:
        # Opened within the same second (the old ids were chat_<date>_<HH-MM>: one for all).
        sessions = await asyncio.gather(
            *(conn.new_session(cwd=cwd, mcp_servers=[]) for _ in range(SESSIONS))
        )
        ids = [s.session_id for s in sessions]
        assert len(set(ids)) == SESSIONS, ids
        # Empty sessions are reserved, not listed as (broken) chats.
        assert (await conn.list_sessions(cwd=cwd)).sessions == []
        prompts = [f"Session {n}: what is {n} squared?" for n in range(SESSIONS)]
        answers = await asyncio.gather(
            *(
                conn.prompt(session_id=i, prompt=[text_block(p)])
                for i, p in zip(ids, prompts, strict=True)
            )
        )
        listed = (await conn.list_sessions(cwd=cwd)).sessions
    assert [a.stop_reason for a in answers] == ["end_turn"] * SESSIONS
    texts = {
        i: "".join(
            u.content.text
            for s, u in editor.updates
            if s == i and u.session_update == "agent_message_chunk"
        )
        for i in ids
    }
    assert sorted(texts.values()) == sorted("".join(answer_parts(n)) for n in range(SESSIONS))
    for session_id, prompt in zip(ids, prompts, strict=True):
        assert saved(acp_home, session_id) == [
            ("user", prompt),
            ("assistant", texts[session_id]),
        ]
    assert sorted(s.session_id for s in listed) == sorted(ids)
    left = sorted(p.name for p in (acp_home / "data/chat_history").iterdir())
    assert left == sorted(f"{i}.json" for i in ids)  # no reservation outlives the first save


async def test_a_session_closed_without_a_prompt_leaves_nothing_behind(acp_home: Path) -> None:
    async with running_agent(acp_home, Editor()) as conn:
        session = await conn.new_session(cwd=str(acp_home / "project"), mcp_servers=[])
        assert session.session_id.startswith("chat_")
    history = acp_home / "data/chat_history"
    assert not history.exists() or list(history.iterdir()) == []
