"""The completion model's server starts when the first document opens, not on the first key.

Issue 27: the first suggestion after opening a file waited for the embedded model to start
(2-4 s). The completion provider here is a real tiny server started by its ``[launch]`` table.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.e2e.lsp.conftest import serve_from
from tests.e2e.lsp.test_inline_completion import open_doc
from tests.support.replay_server import ReplayServer
from tests.support.tiny_launch import Tiny


@pytest.fixture(autouse=True)
def tiny(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> Tiny:
    serve_from(lsp_home, replay, monkeypatch)
    tiny = Tiny(lsp_home)
    (lsp_home / "config/providers/embedded.toml").write_text(
        tiny.provider_file("Embedded", "--spawn-log", str(tiny.spawn_log))
    )
    return tiny


async def spawned(tiny: Tiny, seconds: float) -> bool:
    for _ in range(int(seconds / 0.1)):
        if tiny.spawns():
            return True
        await asyncio.sleep(0.1)
    return False


async def test_opening_a_document_starts_the_completion_model(client, lsp_home, tiny) -> None:
    await client.initialize_session(client.init_params)
    await asyncio.sleep(0.5)
    assert not tiny.spawns()  # connecting alone (a chat-only session) starts nothing
    await open_doc(client, lsp_home)
    assert await spawned(tiny, 15)  # no completion request was made


async def test_manual_mode_does_not_start_it(client, lsp_home, tiny) -> None:
    (lsp_home / "config/settings.toml").write_text('[completion]\nmode = "manual"\n')
    await client.initialize_session(client.init_params)
    await open_doc(client, lsp_home)
    assert not await spawned(tiny, 2)
