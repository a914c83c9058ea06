"""Many chats at once over ``serve --http``: unique ids, own events, own histories; a busy chat.

The provider is a loopback replay server whose scripted answers go to the requests in the order
they arrive, so which chat gets which answer is not known beforehand: each check is that every
answer reached exactly one client, whole, and that each chat's history holds its own question and
the answer its client received — nothing of another chat.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.http.conftest import HttpServer, start_http, stop
from tests.support.replay_server import ReplayServer, Reply
from tests.support.streams import chat_reply
from tests.support.workspace import Workspace

AGENT = "E2E OpenAI (no tools)"
ROUTE = "/v1/chat/completions"
CHATS = 32


@pytest.fixture
def server(workspace: Workspace, replay: ReplayServer) -> Iterator[HttpServer]:
    """``serve --http`` whose one chat agent speaks OpenAI chat completions to ``replay``."""
    workspace.write("pipelines.toml", f'[pipelines]\nchat_assistant = ["{AGENT}"]\n')
    server = start_http(workspace, replay)
    try:
        yield server
    finally:
        stop(server)


def answer_parts(n: int) -> list[str]:
    """The pieces of scripted answer ``n`` (several, so concurrent streams interleave)."""
    return [f"Answer {n:02d}", " is", " whole", f" ({n:02d})."]


def held_reply(text: str) -> Reply:
    """A stream that sends ``text`` and then stays open until the client goes away."""
    chunk = {"choices": [{"index": 0, "delta": {"content": text}}]}
    return Reply(
        body=f"data: {json.dumps(chunk)}\n\n".encode(),
        content_type="text/event-stream",
        hold_open=True,
    )


def body(message: str, chat_id: str | None = None, stream: bool = True) -> dict[str, Any]:
    extension = {"chatId": chat_id} if chat_id else {}
    return {
        "model": AGENT,
        "messages": [{"role": "user", "content": message}],
        "stream": stream,
        "qodeassist": extension,
    }


class Turn:
    """One ``/v1/chat/completions`` call: its status, chat id, streamed text and errors."""

    def __init__(self) -> None:
        self.status = 0
        self.chat_id = ""
        self.text = ""
        self.errors: list[dict[str, Any]] = []
        self.first_text = asyncio.Event()
        self.ended = False


async def run_turn(http: httpx.AsyncClient, payload: dict[str, Any], turn: Turn) -> Turn:
    """Post ``payload``; read the SSE stream (or the JSON answer) into ``turn``."""
    async with http.stream("POST", "/v1/chat/completions", json=payload) as response:
        turn.status = response.status_code
        turn.chat_id = response.headers.get("x-qodeassist-chat-id", "")
        if not payload["stream"] or response.status_code != 200:
            data = json.loads(await response.aread())
            if response.status_code == 200:
                turn.text = data["choices"][0]["message"]["content"]
                turn.chat_id = turn.chat_id or data["qodeassist"]["chatId"]
            else:
                turn.errors.append(data.get("error", data))
            turn.ended = True
            return turn
        async for line in response.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[len("data: ") :])
            if "error" in chunk:
                turn.errors.append(chunk["error"])
                continue
            for choice in chunk.get("choices", []):
                content = choice.get("delta", {}).get("content")
                if content:
                    turn.text += content
                    turn.first_text.set()
    turn.ended = True
    return turn


def history(server: HttpServer, chat_id: str) -> list[tuple[str, str]]:
    """The (role, text) of every message in the chat's history file, as a third reader sees it."""
    saved = json.loads((server.workspace.data / "chat_history" / f"{chat_id}.json").read_text())
    return [(m["role"], "".join(b.get("text", "") for b in m["blocks"])) for m in saved["messages"]]


def client(server: HttpServer) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=server.url,
        headers={"Authorization": f"Bearer {server.token}"},
        timeout=60,
        limits=httpx.Limits(max_connections=CHATS + 4),
    )


async def test_32_chats_opened_at_once_get_their_own_ids_events_and_histories(
    server: HttpServer, replay: ReplayServer
) -> None:
    # The first 30 characters are the same (the old ids took the title's first 30 and the
    # minute), half the clients stream, half wait for the JSON answer.
    replay.script(ROUTE, [chat_reply(*answer_parts(n), split="events") for n in range(CHATS)])
    questions = [f"Please summarise the text below for me, part {n}" for n in range(CHATS)]
    async with client(server) as http:
        turns = await asyncio.gather(
            *(run_turn(http, body(q, stream=n % 2 == 0), Turn()) for n, q in enumerate(questions))
        )
        listed = (await http.get("/v1/qodeassist/chats")).json()
    assert [t.status for t in turns] == [200] * CHATS, [t.errors for t in turns]
    assert [t.errors for t in turns] == [[]] * CHATS
    ids = [t.chat_id for t in turns]
    assert len(set(ids)) == CHATS, ids
    assert all(i.isascii() and i.startswith("Please_summarise_the_text_bel") for i in ids)
    # Every answer reached exactly one client, whole and in order (never interleaved).
    expected = {"".join(answer_parts(n)) for n in range(CHATS)}
    assert sorted(t.text for t in turns) == sorted(expected)
    for question, turn in zip(questions, turns, strict=True):
        assert history(server, turn.chat_id) == [("user", question), ("assistant", turn.text)]
    assert sorted(c["chatId"] for c in listed) == sorted(ids)


async def test_a_message_into_a_busy_chat_is_refused_and_the_running_answer_goes_on(
    server: HttpServer, replay: ReplayServer
) -> None:
    replay.script(ROUTE, [held_reply("The first answer, so far"), chat_reply("Third answer")])
    async with client(server) as http:
        first = Turn()
        running = asyncio.create_task(run_turn(http, body("first question"), first))
        await asyncio.wait_for(first.first_text.wait(), 30)
        for stream in (False, True):  # JSON and streaming clients are refused alike
            second = await run_turn(
                http, body("second question", first.chat_id, stream=stream), Turn()
            )
            assert second.status == 409, second.errors
            assert second.errors[0]["code"] == "chat_busy"
            assert "still answering" in second.errors[0]["message"]
        # Refused at once: the first answer still streams and its upstream is still open.
        assert not running.done() and not first.ended
        assert not replay.requests[0].disconnected.is_set()
        assert len(replay.requests) == 1  # the refused message reached no model
        chat = (await http.get(f"/v1/qodeassist/chats/{first.chat_id}")).json()
        assert chat["busy"] is True
        # An explicit cancel still stops it; then the chat takes the next message.
        await http.post(f"/v1/qodeassist/chats/{first.chat_id}/cancel")
        await asyncio.wait_for(running, 30)
        assert first.errors and first.errors[0]["code"] == "cancelled"
        third = await run_turn(http, body("third question", first.chat_id), Turn())
    assert third.status == 200 and third.text == "Third answer"
    users = [text for role, text in history(server, first.chat_id) if role == "user"]
    assert users == ["first question", "third question"]
    assert history(server, first.chat_id)[-1] == ("assistant", "Third answer")


async def test_an_http_server_and_an_acp_agent_on_one_data_root_never_share_a_chat(
    server: HttpServer, replay: ReplayServer
) -> None:
    import sys

    from acp import PROTOCOL_VERSION, spawn_agent_process, text_block

    from tests.e2e.acp.conftest import Editor

    http_chats, acp_sessions = 12, 6
    total = http_chats + acp_sessions
    replay.script(ROUTE, [chat_reply(*answer_parts(n), split="events") for n in range(total)])
    ws = server.workspace
    # "chat" on the first line: the old id of both doors' new chats was chat_<date>_<HH-MM>.
    questions = [f"chat\nquestion {n} from http" for n in range(http_chats)]
    prompts = [f"question {n} from acp" for n in range(acp_sessions)]
    editor = Editor()
    with (ws.root / "acp.log").open("ab") as log:
        async with (
            client(server) as http,
            spawn_agent_process(
                editor, sys.executable, "-m", "qodeassist_lsp", "acp",
                env=ws.env, cwd=str(ws.project),
                transport_kwargs={"stderr": log.fileno(), "shutdown_timeout": 10.0},
            ) as (conn, _process),
        ):  # fmt: skip
            await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), 30)

            async def acp_turn(prompt: str) -> tuple[str, str]:
                session = await conn.new_session(cwd=str(ws.project), mcp_servers=[])
                await conn.prompt(session_id=session.session_id, prompt=[text_block(prompt)])
                return session.session_id, prompt

            turns, acp_done = await asyncio.gather(
                asyncio.gather(*(run_turn(http, body(q), Turn()) for q in questions)),
                asyncio.gather(*(acp_turn(p) for p in prompts)),
            )
    assert [t.status for t in turns] == [200] * http_chats, [t.errors for t in turns]
    acp_texts = {
        session_id: "".join(
            u.content.text
            for s, u in editor.updates
            if s == session_id and u.session_update == "agent_message_chunk"
        )
        for session_id, _ in acp_done
    }
    ids = [t.chat_id for t in turns] + list(acp_texts)
    assert len(set(ids)) == total, ids
    answers = [t.text for t in turns] + list(acp_texts.values())
    assert sorted(answers) == sorted("".join(answer_parts(n)) for n in range(total))
    for question, turn in zip(questions, turns, strict=True):
        assert history(server, turn.chat_id) == [("user", question), ("assistant", turn.text)]
    for session_id, prompt in acp_done:
        assert history(server, session_id) == [
            ("user", prompt),
            ("assistant", acp_texts[session_id]),
        ]
    left = sorted(p.name for p in (ws.data / "chat_history").iterdir())
    assert left == sorted(f"{i}.json" for i in ids)
