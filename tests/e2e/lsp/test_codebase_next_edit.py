"""Next edits see the codebase index: a changed signature brings its callers in other files.

The real server over stdio indexes its workspace; after ``def area(w, h)`` becomes
``def area(w, h, d)`` in geo.py, the next-edit prompt sent upstream (the replay server) shows
the function of report.py that calls ``area``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsprotocol import types

from tests.e2e.lsp.conftest import serve_from
from tests.e2e.lsp.test_next_edit import CHAT, DOC, change, inline_edit, ready, rewrite
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply

REPORT = (
    "from geo import area\n\n\ndef report(rooms):\n    return sum(area(w, h) for w, h in rooms)\n"
)


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_from(lsp_home, replay, monkeypatch)
    (lsp_home / "config/settings.toml").write_text(
        "[completion]\nwarm_idle_ms = 0\n\n[next_edit]\ntime_budget_ms = 4000\n"
    )
    (lsp_home / "project/geo.py").write_text(DOC)
    (lsp_home / "project/report.py").write_text(REPORT)


async def test_a_changed_signature_brings_its_caller(client, lsp_home, replay) -> None:
    changed = DOC.replace("def area(w, h)", "def area(w, h, d)")
    replay.script(CHAT, chat_reply(rewrite(changed)))
    await client.initialize_session(client.init_params)
    status = await client.protocol.send_request_async("qodeassist/codebase/reindex", {"wait": True})
    assert status.symbols >= 2, status
    uri = (lsp_home / "project/geo.py").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, DOC))
    )
    await ready(client)
    change(client, uri, 2, types.Range(types.Position(0, 13), types.Position(0, 13)), ", d")
    await inline_edit(client, uri)
    prompt = json.dumps(replay.last.json["messages"])
    assert '<snippet path=\\"report.py\\">' in prompt, prompt
    assert "return sum(area(w, h) for w, h in rooms)" in prompt
