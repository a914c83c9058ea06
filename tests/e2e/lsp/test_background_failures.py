"""A provider outage while typing: told once per outage, the status says why (issue 47, item 4).

Inline completion and next edit run in the background; their failures used to send an Error
``window/showMessage`` per feature (two red toasts for one outage) while the status still said
``ready``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from tests.e2e.lsp.conftest import serve_from
from tests.e2e.lsp.test_inline_completion import open_doc, params
from tests.e2e.lsp.test_next_edit import CHAT, change, inline_edit
from tests.e2e.lsp.test_resilience import DOWN, status_of
from tests.support.replay_server import ReplayServer
from tests.support.streams import completion_reply


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_from(lsp_home, replay, monkeypatch)
    (lsp_home / "config/settings.toml").write_text(
        # char_threshold = 0: each key asks however slowly a loaded machine types them (the
        # typed-character count has a time window, and a space does not count).
        "[completion]\ndebounce_ms = 0\nadaptive_debounce = false\ntyped_ahead_cache = false\n"
        "warm_idle_ms = 0\nprefetch_after_accept = false\nchar_threshold = 0\n"
        "[resilience]\nfailure_threshold = 100\n"
    )


def outage_messages(client) -> list[types.ShowMessageParams]:
    return [m for m in client.messages if "qodeassist" in m.message]


async def test_an_outage_while_typing_is_told_once_and_the_status_says_why(
    client, lsp_home, replay
) -> None:
    replay.script("/v1/completions", [DOWN, DOWN, DOWN])
    replay.script(CHAT, [DOWN, DOWN])
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    for version, column in ((2, 11), (3, 12), (4, 13)):  # typing "a +", asking at each key
        where = types.Range(types.Position(1, column), types.Position(1, column))
        change(client, uri, version, where, "a +"[column - 11])
        answer = await client.text_document_inline_completion_async(
            params(uri, 1, column + 1, False)
        )
        assert answer is None or not answer.items
    for _ in range(2):
        assert await inline_edit(client, uri, version=4, line=1) == []
    assert [r.path for r in replay.requests].count("/v1/completions") == 3

    [message] = outage_messages(client)
    assert message.type == types.MessageType.Warning
    assert "model crashed" in message.message and "qodeassist-lsp doctor" in message.message
    status = await status_of(client)
    assert status["state"] == "degraded"
    assert status["outage"]["feature"] == "next edit"
    assert "model crashed" in status["outage"]["reason"]
    assert "doctor" in status["outage"]["fix"]

    # It works again: the outage is over, and the next one is told again.
    replay.script("/v1/completions", [completion_reply(" b"), DOWN])
    change(client, uri, 5, types.Range(types.Position(1, 14), types.Position(1, 14)), " ")
    answer = await client.text_document_inline_completion_async(params(uri, 1, 15, True))
    assert [item.insert_text for item in answer.items] == ["b"]
    assert (await status_of(client))["state"] == "ready"
    change(client, uri, 6, types.Range(types.Position(1, 15), types.Position(1, 15)), "b")
    await client.text_document_inline_completion_async(params(uri, 1, 16, True))
    assert len(outage_messages(client)) == 2
