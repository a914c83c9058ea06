"""A model server's start-up progress (the embedded model's download) reaches the editor.

The [launch] command is a real tiny server that prints ``progress: N% …`` lines before it
listens, as ``embedded serve`` does while it downloads its model; the client gets them as one
server-created ``$/progress``: begin, reports with their percentage, end.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from tests.e2e.lsp.conftest import serve_from
from tests.e2e.lsp.test_chat import request, start, texts
from tests.support.replay_server import ReplayServer
from tests.support.tiny_launch import Tiny


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_from(lsp_home, replay, monkeypatch)
    tiny = Tiny(lsp_home)
    (lsp_home / "config/providers/embedded_instruct.toml").write_text(
        tiny.provider_file("Embedded Instruct", "--progress")
    )


async def test_the_download_shows_as_work_done_progress(client) -> None:
    events = await start(client)
    sent = await request(client, "chat/send", {"message": "hi"})
    assert (await events.terminal(sent["requestId"], within=30))["kind"] == "finished"
    assert texts(events.of(sent["requestId"])) == "pong"
    started = [
        reports
        for reports in client.progress_reports.values()
        if reports and getattr(reports[0], "title", "") == "QodeAssist: starting Embedded Instruct"
    ]
    assert len(started) == 1, client.progress_reports
    reports = started[0]
    assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].percentage == 0
    middle = [r for r in reports if isinstance(r, types.WorkDoneProgressReport)]
    assert [r.percentage for r in middle] == [50, 100]
    assert middle[0].message == "downloading model.gguf: 50 of 100 MiB"
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    assert reports[-1].message == "Embedded Instruct: ready"
