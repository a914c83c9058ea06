"""Next edits from short, empty and CRLF answers over stdio: never a deletion the model did not make.

A model that stops before the end of the window (a lazy or truncated rewrite) must not delete
the lines it did not write; an empty answer is no change; a CRLF answer is normalised to the
document's line ending before it is compared with the window.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.lsp.conftest import serve_from
from tests.e2e.lsp.test_next_edit import CHAT, DOC, SUGGESTED, _plain, change, inline_edit
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply

# 30 lines: a definition, then calls; the cursor on line 10 gives the window lines 0-20.
LONG = ["def area(w, h):", "    return w * h", ""] + [
    f"v{i} = area({i}, {i})" for i in range(3, 30)
]


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_from(lsp_home, replay, monkeypatch)
    (lsp_home / "config/settings.toml").write_text(
        "[completion]\nwarm_idle_ms = 0\n\n[next_edit]\ntime_budget_ms = 4000\n"
    )


async def open_doc(client, home: Path, text: str, name: str = "geo.py") -> str:
    await client.initialize_session(client.init_params)
    path = home / "project" / name
    path.write_bytes(text.encode())
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, text))
    )
    return uri


async def renamed(client, home: Path, lines: list[str], eol: str = "\n") -> str:
    """Open ``lines`` and rename ``area`` in the definition on line 0 (version 2)."""
    uri = await open_doc(client, home, eol.join(lines) + eol)
    change(client, uri, 2, types.Range(types.Position(0, 4), types.Position(0, 8)), "surface")
    return uri


def answer(lines: list[str], eol: str = "\n") -> str:
    return f"<updated>{eol}" + eol.join(lines) + f"{eol}</updated>"


async def outcomes(client) -> dict[str, Any]:
    status = _plain(await client.protocol.send_request_async("qodeassist/status", {}))
    return dict(status["nextEdit"]["outcomes"])


async def test_a_rewrite_that_stops_early_keeps_the_window_tail(client, lsp_home, replay) -> None:
    uri = await renamed(client, lsp_home, LONG)
    window = ["def surface(w, h):", *LONG[1:21]]
    # The model renamed the call on line 4 and closed </updated> after 11 of the 21 lines.
    short = [line.replace("v4 = area", "v4 = surface") for line in window[:11]]
    replay.script(CHAT, chat_reply(answer(short)))
    [edit] = await inline_edit(client, uri, line=10)
    assert edit["range"] == {
        "start": {"line": 4, "character": 5},
        "end": {"line": 4, "character": 9},
    }
    assert edit["text"] == "surface"


async def test_an_early_stop_that_cannot_be_placed_is_no_suggestion(
    client, lsp_home, replay
) -> None:
    lines = list(LONG)
    lines[8] = lines[15] = "print()"
    uri = await renamed(client, lsp_home, lines)
    window = ["def surface(w, h):", *lines[1:21]]
    # Line 7 changed, then the model wrote "print()" (lines 8 and 15 of the window) and stopped.
    short = [*window[:7], "v7 = surface(7, 7)", "print()"]
    replay.script(CHAT, chat_reply(answer(short)))
    assert await inline_edit(client, uri, line=10) == []
    # It changed its last line and stopped: whether it meant to delete the rest is unknown.
    changed_last = [*window[:10], "v10 = surface(10, 10)"]
    replay.script(CHAT, chat_reply(answer(changed_last)))
    change(client, uri, 3, types.Range(types.Position(1, 0), types.Position(1, 0)), " ")
    assert await inline_edit(client, uri, version=3, line=10) == []
    assert await outcomes(client) == {"malformed": 2}


async def test_an_empty_answer_is_no_change_not_a_deleted_file(client, lsp_home, replay) -> None:
    uri = await open_doc(client, lsp_home, "x = 1\n", name="one.py")
    change(client, uri, 2, types.Range(types.Position(0, 4), types.Position(0, 5)), "2")
    replay.script(CHAT, chat_reply("<updated>\n</updated>"))
    assert await inline_edit(client, uri, line=0) == []
    assert await outcomes(client) == {"no_change": 1}


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
async def test_a_crlf_answer_takes_the_documents_line_ending(client, lsp_home, replay, eol) -> None:
    uri = await renamed(client, lsp_home, DOC.splitlines(), eol)
    replay.script(CHAT, chat_reply(answer(SUGGESTED.splitlines(), "\r\n")))
    [edit] = await inline_edit(client, uri)
    assert edit["range"] == {
        "start": {"line": 4, "character": 6},
        "end": {"line": 5, "character": 10},
    }
    assert edit["text"] == f"surface(2, 3)){eol}print(surface"
