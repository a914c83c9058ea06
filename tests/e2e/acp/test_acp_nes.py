"""ACP next-edit suggestions (``nes/*``, ``document/*``) against the real agent process.

The SDK's client has no helpers for these unstable methods, so the test sends them as raw
JSON-RPC on the client connection. The next-edit agent talks to the loopback replay provider,
which answers a recorded rewrite (as in ``tests/e2e/lsp/test_next_edit.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import RequestError

from tests.e2e.acp.conftest import Editor, running_agent
from tests.e2e.lsp.test_next_edit import CHAT, DOC, SUGGESTED, rewrite
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply


@pytest.fixture(autouse=True)
def _budget(acp_home: Path) -> None:
    (acp_home / "config/settings.toml").write_text("[next_edit]\ntime_budget_ms = 4000\n")


async def _request(conn: Any, method: str, params: dict[str, Any]) -> Any:
    return await conn._conn.send_request(method, params)


async def _notify(conn: Any, method: str, params: dict[str, Any]) -> None:
    await conn._conn.send_notification(method, params)


async def _renamed(conn: Any, home: Path) -> tuple[str, str]:
    """Start an NES session, open the file and rename ``area`` in its definition (version 2)."""
    project = home / "project"
    started = await _request(conn, "nes/start", {"workspaceUri": project.as_uri()})
    session = started["sessionId"]
    uri = (project / "geo.py").as_uri()
    await _notify(
        conn,
        "document/didOpen",
        {"sessionId": session, "uri": uri, "languageId": "python", "version": 1, "text": DOC},
    )
    where = {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 8}}
    await _notify(
        conn,
        "document/didChange",
        {
            "sessionId": session,
            "uri": uri,
            "version": 2,
            "contentChanges": [{"range": where, "text": "surface"}],
        },
    )
    return session, uri


def _suggest(session: str, uri: str, version: int = 2) -> dict[str, Any]:
    return {
        "sessionId": session,
        "uri": uri,
        "version": version,
        "position": {"line": 0, "character": 11},
        "triggerKind": "automatic",
    }


async def test_initialize_advertises_nes_and_its_document_events(acp_home: Path) -> None:
    async with running_agent(acp_home, Editor()) as conn:
        answer = await _request(
            conn, "initialize", {"protocolVersion": 1, "clientCapabilities": {}}
        )
    capabilities = answer["agentCapabilities"]
    assert capabilities["positionEncoding"] == "utf-16"
    document = capabilities["nes"]["events"]["document"]
    assert document["didChange"] == {"syncKind": "incremental"}
    assert {"didOpen", "didClose", "didFocus"} <= set(document)


async def test_a_rename_suggests_the_call_sites_and_accept_counts(
    acp_home: Path, replay: ReplayServer
) -> None:
    async with running_agent(acp_home, Editor()) as conn:
        session, uri = await _renamed(conn, acp_home)
        replay.script(CHAT, chat_reply(rewrite(SUGGESTED)[:40], rewrite(SUGGESTED)[40:]))
        answer = await _request(conn, "nes/suggest", _suggest(session, uri))
        [suggestion] = answer["suggestions"]
        assert suggestion["kind"] == "edit" and suggestion["uri"] == uri
        assert suggestion["edits"] == [
            {
                "range": {
                    "start": {"line": 4, "character": 6},
                    "end": {"line": 5, "character": 10},
                },
                "newText": "surface(2, 3))\nprint(surface",
            }
        ]
        prompt = replay.last.json["messages"][-1]["content"]
        assert "original:\ndef area(w, h):\nupdated:\ndef surface(w, h):" in prompt
        await _notify(conn, "nes/accept", {"sessionId": session, "id": suggestion["id"]})
        assert await _request(conn, "nes/close", {"sessionId": session}) == {}
    log = (acp_home / "agent.log").read_text()
    assert f"next edit {suggestion['id']} accepted (1 in all)" in log


async def test_an_answer_that_changes_nothing_gives_no_suggestion(
    acp_home: Path, replay: ReplayServer
) -> None:
    async with running_agent(acp_home, Editor()) as conn:
        session, uri = await _renamed(conn, acp_home)
        renamed = DOC.replace("def area", "def surface")
        replay.script(CHAT, chat_reply(rewrite(renamed)))
        assert await _request(conn, "nes/suggest", _suggest(session, uri)) == {"suggestions": []}
        # a version the agent does not have: no suggestion, no request upstream
        before = len(replay.requests)
        stale = await _request(conn, "nes/suggest", _suggest(session, uri, version=1))
        assert stale == {"suggestions": []} and len(replay.requests) == before


async def test_an_unknown_nes_session_is_invalid_params(acp_home: Path) -> None:
    async with running_agent(acp_home, Editor()) as conn:
        with pytest.raises(RequestError) as caught:
            await _request(conn, "nes/suggest", _suggest("nes-nope", "file:///x.py", 1))
    assert caught.value.code == -32602
    assert "start one with nes/start" in str(caught.value.data)


async def test_a_column_inside_an_emoji_lands_where_the_lsp_puts_it(
    acp_home: Path, replay: ReplayServer
) -> None:
    """UTF-16 column 9 of ``note = "😀"`` is inside the emoji: both doors round up past it."""
    async with running_agent(acp_home, Editor()) as conn:
        project = acp_home / "project"
        session = (await _request(conn, "nes/start", {"workspaceUri": project.as_uri()}))[
            "sessionId"
        ]
        uri = (project / "note.py").as_uri()
        text = 'note = "😀"\n' + DOC
        opened = {"sessionId": session, "uri": uri, "languageId": "python", "version": 1}
        await _notify(conn, "document/didOpen", {**opened, "text": text})
        where = {"start": {"line": 0, "character": 9}, "end": {"line": 0, "character": 9}}
        changed = {"sessionId": session, "uri": uri, "version": 2}
        await _notify(
            conn,
            "document/didChange",
            {**changed, "contentChanges": [{"range": where, "text": "!"}]},
        )
        replay.script(CHAT, chat_reply(rewrite('note = "😀!"\n' + DOC)))
        await _request(conn, "nes/suggest", _suggest(session, uri))
        prompt = replay.last.json["messages"][-1]["content"]
    assert 'original:\nnote = "😀"\nupdated:\nnote = "😀!"' in prompt
