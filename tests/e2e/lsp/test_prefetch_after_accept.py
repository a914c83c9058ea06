"""The suggestion after an accept, prefetched (issue 27), over stdio against a loopback provider."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from tests.e2e.lsp.conftest import serve_from
from tests.e2e.lsp.test_inline_completion import open_doc, params
from tests.support.replay_server import ReplayServer, Reply
from tests.support.streams import completion_reply


@pytest.fixture(autouse=True)
def embedded_points_at_replay(
    lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve_from(lsp_home, replay, monkeypatch)
    (lsp_home / "config/settings.toml").write_text(
        "[completion]\ndebounce_ms = 50\ndebounce_min_ms = 0\nwarm_idle_ms = 0\n"
        "char_threshold = 0\nsmart_context_trigger = false\nprefetch_after_accept = true\n"
    )


def insert(client, uri: str, version: int, line: int, character: int, text: str) -> None:
    position = types.Position(line, character)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=version, uri=uri),
            [
                types.TextDocumentContentChangePartial(
                    range=types.Range(position, position), text=text
                )
            ],
        )
    )


async def test_the_suggestion_after_an_accept_comes_from_the_prefetch(
    client, lsp_home, replay
) -> None:
    replay.script("/v1/completions", [completion_reply("a + b"), completion_reply("  # sum")])
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    shown = await client.text_document_inline_completion_async(params(uri, 1, 11, invoked=False))
    assert shown.items[0].insert_text == "a + b"
    # Prefetched while the user reads it: the document as it will be after the accept.
    _, prefetch = await replay.wait_for_requests_async(2)
    assert prefetch.json["prompt"] == "def add(a, b):\n    return a + b"
    await asyncio.sleep(0.2)  # the prefetch has answered
    insert(client, uri, 2, 1, 11, "a + b")  # Tab
    follow = await client.text_document_inline_completion_async(params(uri, 1, 16, invoked=False))
    assert follow.items[0].insert_text == "  # sum"
    # No provider request of its own: a third one, if any, is already the next prefetch (the
    # document after accepting "  # sum" too).
    later = [r.json["prompt"] for r in replay.requests[2:]]
    assert later in ([], ["def add(a, b):\n    return a + b  # sum"]), later
    status = await client.protocol.send_request_async("qodeassist/status", {})
    assert status.completion.prefetchesAccepted == 1


async def test_typing_something_else_cancels_the_prefetch(client, lsp_home, replay) -> None:
    held = Reply(hold_open=True)
    replay.script("/v1/completions", [completion_reply("a + b"), held, completion_reply("1")])
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home)
    shown = await client.text_document_inline_completion_async(params(uri, 1, 11, invoked=False))
    assert shown.items[0].insert_text == "a + b"
    _, prefetch = await replay.wait_for_requests_async(2)
    insert(client, uri, 2, 1, 11, "x")  # not the accept
    assert await prefetch.wait_disconnected_async(within=2)  # the slot is free at once
    typed = await client.text_document_inline_completion_async(params(uri, 1, 12, invoked=False))
    assert typed.items[0].insert_text == "1"
    # The typed "x" is healed (a word after code): the model is made to write " x" again.
    assert replay.requests[2].json["prompt"] == "def add(a, b):\n    return"
    assert '" x"' in replay.requests[2].json["grammar"]
    status = await client.protocol.send_request_async("qodeassist/status", {})
    assert status.completion.prefetchesAccepted == 0
