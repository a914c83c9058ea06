"""Next edits honour one ignore rule through the LSP server and the ACP agent alike (issue 44).

The workspace has two folders; the second one's ``.qodeassistignore`` lists ``secret.py``, which
the user opened and edited. Through either door, asking for a next edit in ``secret.py`` gets
none and sends nothing, and a next edit in the first folder's ``geo.py`` never quotes it (neither
as a recent edit nor as a recent file): the workbench's rule, the ``.qodeassistignore`` of every
workspace folder, is the same for both.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.acp.conftest import Editor, running_agent
from tests.e2e.conformance.doors import SECRET, lsp_server, make_home, sent_to_provider
from tests.e2e.lsp.test_next_edit import CHAT, DOC, SUGGESTED, rewrite
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply

SECRET_DOC = f"TOKEN = '{SECRET}'\n"
RENAME = {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 8}}
AT_START = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}

Ask = Callable[[str], Awaitable[list[Any]]]
"""Ask the door for next edits in the document at this URI (version 2); return them."""


@pytest.fixture
def replay() -> Any:
    with ReplayServer() as server:
        yield server


def _home(tmp_path: Path, replay: ReplayServer) -> tuple[Path, Path]:
    home = make_home(tmp_path, replay)
    with (home / "config/settings.toml").open("a") as settings:
        # Only the asked next edits go upstream (no prefetch on an edit pause).
        settings.write("\n[completion]\nwarm_idle_ms = 0\n\n[next_edit]\ntime_budget_ms = 4000\n")
    other = home / "other"
    other.mkdir()
    (other / ".qodeassistignore").write_text("secret.py\n")
    (other / "secret.py").write_text(SECRET_DOC)
    (home / "project/geo.py").write_text(DOC)
    return home, other


async def _edit_both(
    notify: Callable[[str, dict[str, Any]], Awaitable[None]], home: Path, other: Path
) -> tuple[str, str]:
    """Open and edit the ignored file, then rename ``area`` in ``geo.py``; return their URIs."""
    secret, geo = (other / "secret.py").as_uri(), (home / "project/geo.py").as_uri()
    for uri, text, where, new in (
        (secret, SECRET_DOC, AT_START, "#"),
        (geo, DOC, RENAME, "surface"),
    ):
        await notify("didOpen", {"uri": uri, "languageId": "python", "version": 1, "text": text})
        await notify(
            "didChange", {"uri": uri, "version": 2, "change": {"range": where, "text": new}}
        )
    return secret, geo


async def _scenario(ask: Ask, secret: str, geo: str, replay: ReplayServer) -> None:
    assert await ask(secret) == []
    assert replay.requests == []  # an ignored document's next edit is never asked for
    replay.script(CHAT, chat_reply(rewrite(SUGGESTED)))
    assert len(await ask(geo)) == 1
    assert "surface" in sent_to_provider(replay)  # the rename was sent …
    assert SECRET not in sent_to_provider(replay)  # … the ignored file's edit never


async def test_over_lsp(tmp_path: Path, replay: ReplayServer) -> None:
    home, other = _home(tmp_path, replay)
    async with asyncio.timeout(60), lsp_server(home, other) as lsp:

        async def notify(kind: str, params: dict[str, Any]) -> None:
            document = {k: v for k, v in params.items() if k != "change"}
            changes = {"contentChanges": [params["change"]]} if "change" in params else {}
            await lsp.send(
                {
                    "method": f"textDocument/{kind}",
                    "params": {"textDocument": document, **changes},
                }
            )

        async def ask(uri: str) -> list[Any]:
            answer = await lsp.request(
                "textDocument/copilotInlineEdit",
                {
                    "textDocument": {"uri": uri, "version": 2},
                    "position": {"line": 0, "character": 11},
                },
            )
            assert "error" not in answer, answer
            return list(answer["result"]["edits"])

        secret, geo = await _edit_both(notify, home, other)
        await _scenario(ask, secret, geo, replay)


async def test_over_acp(tmp_path: Path, replay: ReplayServer) -> None:
    home, other = _home(tmp_path, replay)
    async with asyncio.timeout(60), running_agent(home, Editor()) as conn:
        folders = [{"uri": f.as_uri(), "name": f.name} for f in (home / "project", other)]
        started = await conn._conn.send_request("nes/start", {"workspaceFolders": folders})
        session = started["sessionId"]

        async def notify(kind: str, params: dict[str, Any]) -> None:
            if "change" in params:
                params = {**params, "contentChanges": [params.pop("change")]}
            await conn._conn.send_notification(f"document/{kind}", {"sessionId": session, **params})

        async def ask(uri: str) -> list[Any]:
            answer = await conn._conn.send_request(
                "nes/suggest",
                {
                    "sessionId": session,
                    "uri": uri,
                    "version": 2,
                    "position": {"line": 0, "character": 11},
                    "triggerKind": "automatic",
                },
            )
            return list(answer["suggestions"])

        secret, geo = await _edit_both(notify, home, other)
        await _scenario(ask, secret, geo, replay)
