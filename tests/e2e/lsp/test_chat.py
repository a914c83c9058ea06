"""Chat over stdio: streamed events, cancel, failures, persistence, context, compression."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest

from tests.e2e.lsp.conftest import serve_from, stop_server
from tests.support.replay_server import ReplayServer, Reply
from tests.support.streams import chat_reply, completion_reply, write_embedded_instances

TERMINAL = {"finished", "failed", "cancelled"}
CLAUDE_PROVIDER = """schema_version = 1
name = "Claude"
client_api = "Claude"
url = "{url}"
api_key_env = "ANTHROPIC_API_KEY"
"""
PIPELINES = """[pipelines]
chat_assistant = ["Embedded Chat", "Claude Chat — Sonnet"]
"""


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_from(lsp_home, replay, monkeypatch, {"ANTHROPIC_API_KEY": "e2e-key"})
    (lsp_home / "config/providers/claude.toml").write_text(CLAUDE_PROVIDER.format(url=replay.url))
    (lsp_home / "config/pipelines.toml").write_text(PIPELINES)


class Events:
    """Collects ``qodeassist/chat/event`` notifications of one client."""

    def __init__(self, client: Any) -> None:
        self.items: list[dict[str, Any]] = []
        self._changed = asyncio.Event()

        @client.feature("qodeassist/chat/event")
        def on_event(ls: Any, params: Any) -> None:
            self.items.append(_plain(params))
            self._changed.set()

    def of(self, request_id: str) -> list[dict[str, Any]]:
        return [e for e in self.items if e["requestId"] == request_id]

    async def terminal(self, request_id: str, within: float = 10) -> dict[str, Any]:
        return await self._wait(request_id, lambda e: e["kind"] in TERMINAL, within)

    async def first(self, request_id: str, kind: str, within: float = 10) -> dict[str, Any]:
        return await self._wait(request_id, lambda e: e["kind"] == kind, within)

    async def _wait(self, request_id: str, matches: Any, within: float) -> dict[str, Any]:
        async def wait() -> dict[str, Any]:
            while True:
                found = [e for e in self.of(request_id) if matches(e)]
                if found:
                    return found[0]
                self._changed.clear()
                await self._changed.wait()

        return await asyncio.wait_for(wait(), within)


def held_reply(text: str) -> Reply:
    """A chat stream that sends ``text`` and then stays open until the client goes away."""
    chunk = {"choices": [{"index": 0, "delta": {"content": text}}]}
    return Reply(
        body=f"data: {json.dumps(chunk)}\n\n".encode(),
        content_type="text/event-stream",
        hold_open=True,
    )


def _plain(value: Any) -> Any:
    """pygls hands custom notification params over as namedtuples; make them dicts."""
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


async def request(client: Any, method: str, params: dict[str, Any]) -> Any:
    return _plain(await client.protocol.send_request_async(f"qodeassist/{method}", params))


async def start(client: Any) -> Events:
    events = Events(client)
    await client.initialize_session(client.init_params)
    return events


def texts(events: list[dict[str, Any]]) -> str:
    return "".join(e["text"] for e in events if e["kind"] == "text")


async def test_send_streams_events_and_ends_with_exactly_one_terminal(client, lsp_home, replay):
    events = await start(client)
    replay.script("/v1/chat/completions", chat_reply("Hello", ", ", "world", delay=0.02))
    sent = await request(client, "chat/send", {"message": "Say hello"})
    assert set(sent) == {"chatId", "requestId", "agent"} and sent["agent"] == "Embedded Chat"
    terminal = await events.terminal(sent["requestId"])
    assert terminal["kind"] == "finished" and terminal["stopReason"] == "end_turn"
    streamed = events.of(sent["requestId"])
    assert [e["kind"] for e in streamed] == ["text", "text", "text", "finished"]
    assert all(e["chatId"] == sent["chatId"] for e in streamed)
    assert texts(streamed) == "Hello, world"
    # The history is the source of the events: get returns what was streamed.
    chat = await request(client, "chat/get", {"chatId": sent["chatId"]})
    assert [m["role"] for m in chat["messages"]] == ["user", "assistant"]
    assert chat["messages"][1]["blocks"] == [{"type": "text", "text": "Hello, world"}]
    assert chat["agent"] == "Embedded Chat" and chat["busy"] is False
    body = replay.last.json
    assert body["messages"][-1]["content"] == "Say hello"
    assert "Project source root" in body["messages"][0]["content"]  # the chat.context layer
    listed = await request(client, "chat/list", {})
    assert [c["chatId"] for c in listed] == [sent["chatId"]]
    assert listed[0]["title"] == "Say hello"


async def test_thinking_and_text_arrive_interleaved_as_streamed(client, lsp_home, replay):
    events = await start(client)
    replay.script("/v1/messages", Reply(fixture="anthropic/stream_thinking_signature_text.sse"))
    sent = await request(
        client, "chat/send", {"message": "Think first", "agent": "Claude Chat — Sonnet"}
    )
    terminal = await events.terminal(sent["requestId"])
    assert terminal["kind"] == "finished"
    kinds = [e["kind"] for e in events.of(sent["requestId"])]
    first_text = kinds.index("text")
    assert kinds[0] == "thinking" and "thinking" not in kinds[first_text:]
    assert kinds[-2:] == ["usage", "finished"]
    thinking = [e for e in events.of(sent["requestId"]) if e["kind"] == "thinking"]
    assert any(e["signature"] for e in thinking)
    usage = next(e for e in events.of(sent["requestId"]) if e["kind"] == "usage")
    assert usage["inputTokens"] > 0
    assert replay.last.headers["x-api-key"] == "e2e-key"
    chat = await request(client, "chat/get", {"chatId": sent["chatId"]})
    assert chat["agent"] == "Claude Chat — Sonnet"
    blocks = chat["messages"][1]["blocks"]
    assert [b["type"] for b in blocks] == ["thinking", "text"]
    assert blocks[1]["text"] == texts(events.of(sent["requestId"]))


async def test_cancel_mid_stream_gives_cancelled_and_closes_the_upstream(client, lsp_home, replay):
    events = await start(client)
    replay.script("/v1/chat/completions", held_reply("partial"))
    sent = await request(client, "chat/send", {"message": "Write a long essay"})
    await events.first(sent["requestId"], "text")
    [upstream] = await asyncio.to_thread(replay.wait_for_requests, 1)
    assert await request(client, "chat/cancel", {"chatId": sent["chatId"]}) is None
    terminal = await events.terminal(sent["requestId"])
    assert terminal["kind"] == "cancelled"
    assert await upstream.wait_disconnected_async(within=1)
    kinds = [e["kind"] for e in events.of(sent["requestId"])]
    assert kinds.count("cancelled") == 1 and kinds[-1] == "cancelled"
    chat = await request(client, "chat/get", {"chatId": sent["chatId"]})
    assert chat["busy"] is False
    assert chat["messages"][-1]["blocks"] == [{"type": "text", "text": "partial"}]


@pytest.mark.parametrize(
    ("reply", "category"),
    [
        (Reply(fixture="openai_chat/error_http_401_invalid_api_key.json", status=401), "auth"),
        (Reply(fixture="openai_chat/error_midstream_server_error_excerpt.sse"), "provider"),
    ],
)
async def test_provider_failure_gives_failed_with_its_category(
    client, lsp_home, replay, reply, category
):
    events = await start(client)
    replay.script("/v1/chat/completions", reply)
    sent = await request(client, "chat/send", {"message": "Hi"})
    terminal = await events.terminal(sent["requestId"])
    assert terminal["kind"] == "failed"
    assert terminal["error"]["category"] == category
    assert terminal["error"]["message"]
    assert [e["kind"] for e in events.of(sent["requestId"])].count("failed") == 1


async def test_provider_down_gives_a_network_failure(client, lsp_home, replay):
    write_embedded_instances(lsp_home / "config/providers", "http://127.0.0.1:9")
    events = await start(client)
    sent = await request(client, "chat/send", {"message": "Hi"})
    terminal = await events.terminal(sent["requestId"])
    assert terminal["error"]["category"] == "network"
    # Nothing was received: the history is as it was before the send.
    chat = await request(client, "chat/get", {"chatId": sent["chatId"]})
    assert chat["messages"] == []


async def test_invalid_sends_are_refused_with_a_message(client, lsp_home, replay):
    await start(client)
    with pytest.raises(JsonRpcInvalidParams, match="empty"):
        await request(client, "chat/send", {"message": "   "})
    with pytest.raises(JsonRpcInvalidParams, match="not a chat agent"):
        await request(client, "chat/send", {"message": "hi", "agent": "Embedded Completion"})
    with pytest.raises(JsonRpcInvalidParams, match="no chat"):
        await request(client, "chat/send", {"message": "hi", "chatId": "missing"})
    assert replay.requests == []


async def test_attachments_linked_files_and_mentions_reach_the_model(client, lsp_home, replay):
    project = lsp_home / "project"
    (project / "src").mkdir()
    (project / "src/parser.py").write_text("".join(f"line {n}\n" for n in range(1, 31)))
    (project / "notes.md").write_text("remember the milk")
    (project / "linked.py").write_text("ON DISK")
    (project / "shot.png").write_bytes(_png(1024, 512))
    events = await start(client)
    # The open buffer wins over the file on disk for linked files.
    linked_uri = (project / "linked.py").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(linked_uri, "python", 1, "IN THE BUFFER")
        )
    )
    replay.script("/v1/chat/completions", chat_reply("ok"))
    sent = await request(
        client,
        "chat/send",
        {
            "message": "Look at @parser.py:3-4 please",
            "attachments": [(project / "notes.md").as_uri(), (project / "shot.png").as_uri()],
            "linkedFiles": [linked_uri],
        },
    )
    await events.terminal(sent["requestId"])
    user = replay.last.json["messages"][-1]
    parts = user["content"]
    joined = json.dumps(parts)
    assert "Linked files (current content, refreshed every request)" in joined
    assert "IN THE BUFFER" in joined and "ON DISK" not in joined
    assert "[@parser.py](file://" in joined and "line 3\\nline 4" in joined
    assert "line 5" not in joined
    assert "File: notes.md" in joined and "remember the milk" in joined
    assert any(p.get("type") == "image_url" for p in parts if isinstance(p, dict))
    # Attachments were copied beside the chat.
    stored = list((lsp_home / "data/chat_history" / f"{sent['chatId']}_content").iterdir())
    assert sorted(p.suffix for p in stored) == [".md", ".png"]

    # Linked files are re-read on every send.
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=linked_uri, version=2),
            [types.TextDocumentContentChangeWholeDocument(text="EDITED BUFFER")],
        )
    )
    replay.script("/v1/chat/completions", chat_reply("ok"))
    again = await request(client, "chat/send", {"chatId": sent["chatId"], "message": "And now?"})
    await events.terminal(again["requestId"])
    joined = json.dumps(replay.last.json["messages"])
    assert "EDITED BUFFER" in joined and "IN THE BUFFER" not in joined
    assert "remember the milk" in joined  # the earlier attachment is still in the history


async def test_ignored_files_are_refused(client, lsp_home, replay):
    project = lsp_home / "project"
    (project / ".qodeassistignore").write_text("secret.env\n")
    (project / "secret.env").write_text("TOKEN=1")
    await start(client)
    for params in (
        {"message": "see", "attachments": [(project / "secret.env").as_uri()]},
        {"message": "see", "linkedFiles": [(project / "secret.env").as_uri()]},
        {"message": "see @secret.env"},
    ):
        with pytest.raises(JsonRpcInvalidParams, match=r"secret\.env is excluded"):
            await request(client, "chat/send", params)
    assert replay.requests == []
    assert await request(client, "chat/list", {}) == []


async def test_history_survives_a_server_restart(client, lsp_home, replay):
    events = await start(client)
    replay.script("/v1/chat/completions", chat_reply("First answer"))
    sent = await request(client, "chat/send", {"message": "First question"})
    await events.terminal(sent["requestId"])
    await stop_server(client)

    second = pytest_lsp.make_test_lsp_client()
    await second.start_io(sys.executable, "-m", "qodeassist_lsp")
    try:
        events = await start_plain(second, lsp_home)
        listed = await request(second, "chat/list", {})
        assert [c["chatId"] for c in listed] == [sent["chatId"]]
        chat = await request(second, "chat/get", {"chatId": sent["chatId"]})
        assert [m["blocks"][0]["text"] for m in chat["messages"]] == [
            "First question",
            "First answer",
        ]
        replay.script("/v1/chat/completions", chat_reply("Second answer"))
        resumed = await request(
            second, "chat/send", {"chatId": sent["chatId"], "message": "Second question"}
        )
        assert resumed["chatId"] == sent["chatId"]
        await events.terminal(resumed["requestId"])
        contents = [m["content"] for m in replay.last.json["messages"][1:]]
        assert contents == ["First question", "First answer", "Second question"]
    finally:
        await stop_server(second)


def saved_texts(home: Path, chat_id: str) -> list[str]:
    """The texts of the messages in a chat's history file, as a third reader sees them."""
    saved = json.loads((home / "data/chat_history" / f"{chat_id}.json").read_text())
    return [b.get("text", "") for m in saved["messages"] for b in m["blocks"]]


async def test_two_servers_writing_one_chat_lose_no_message(client, lsp_home, replay):
    events = await start(client)
    replay.script("/v1/chat/completions", chat_reply("answer 0"))
    sent = await request(client, "chat/send", {"message": "question 0"})
    chat_id = sent["chatId"]
    await events.terminal(sent["requestId"])
    # A save killed mid-way left its temporary file; the next server to open the folder tidies.
    stale = lsp_home / "data/chat_history" / f".{chat_id[:40]}.killed.tmp"
    stale.write_text('{"version": "0.3", "mess')
    os.utime(stale, (stale.stat().st_mtime - 3600,) * 2)

    second = pytest_lsp.make_test_lsp_client()
    await second.start_io(sys.executable, "-m", "qodeassist_lsp")
    try:
        other_events = await start_plain(second, lsp_home)
        await request(second, "chat/get", {"chatId": chat_id})  # both servers hold the chat
        assert not stale.exists()
        replay.script("/v1/chat/completions", chat_reply("answer", " 1", delay=0.05))
        replay.script("/v1/chat/completions", chat_reply("answer", " 2", delay=0.05))
        one = request(client, "chat/send", {"chatId": chat_id, "message": "question 1"})
        two = request(second, "chat/send", {"chatId": chat_id, "message": "question 2"})
        one, two = await asyncio.gather(one, two)
        await events.terminal(one["requestId"])
        await other_events.terminal(two["requestId"])
        texts_on_disk = saved_texts(lsp_home, chat_id)
        for text in ("question 0", "answer 0", "question 1", "question 2"):
            assert text in texts_on_disk
        assert sorted(t for t in texts_on_disk if t.startswith("answer ")) == [
            "answer 0",
            "answer 1",
            "answer 2",
        ]
        assert len(texts_on_disk) == 6
    finally:
        await stop_server(second)


async def test_a_second_send_on_a_busy_chat_is_refused_and_the_first_goes_on(
    client, lsp_home, replay
):
    events = await start(client)
    replay.script("/v1/chat/completions", held_reply("partial"))
    replay.script("/v1/chat/completions", chat_reply("second answer"))
    first = await request(client, "chat/send", {"message": "first question"})
    await events.first(first["requestId"], "text")
    for refused in (
        {"message": "too soon"},
        {"message": "/remember tabs, never spaces"},  # memory: answered without a model
        {"message": "plan it instead", "mode": "plan"},
    ):
        with pytest.raises(JsonRpcInvalidRequest, match="still answering"):
            await request(client, "chat/send", {"chatId": first["chatId"], **refused})
    assert not [e for e in events.of(first["requestId"]) if e["kind"] in TERMINAL]
    assert len(replay.requests) == 1 and not replay.requests[0].disconnected.is_set()
    # The client cancels first (explicitly), then sends again.
    assert await request(client, "chat/cancel", {"chatId": first["chatId"]}) is None
    assert (await events.terminal(first["requestId"]))["kind"] == "cancelled"
    second = await request(
        client, "chat/send", {"chatId": first["chatId"], "message": "second question"}
    )
    assert (await events.terminal(second["requestId"]))["kind"] == "finished"
    on_disk = saved_texts(lsp_home, first["chatId"])
    assert on_disk[0] == "first question" and on_disk[-2:] == ["second question", "second answer"]
    assert not {"too soon", "/remember tabs, never spaces", "plan it instead"} & set(on_disk)


async def start_plain(client: Any, home: Path) -> Events:
    events = Events(client)
    await client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("neovim"),
            root_uri=(home / "project").as_uri(),
        )
    )
    return events


async def test_compression_creates_a_new_chat(client, lsp_home, replay):
    events = await start(client)
    replay.script("/v1/chat/completions", chat_reply("Use a dict."))
    sent = await request(client, "chat/send", {"message": "How do I count words?"})
    await events.terminal(sent["requestId"])
    replay.script("/v1/chat/completions", chat_reply("The user asked how to count words."))
    new = await request(client, "chat/compress", {"chatId": sent["chatId"]})
    assert new["chatId"] != sent["chatId"]
    transcript = replay.last.json["messages"][-1]["content"]
    assert "User: How do I count words?" in transcript and "Assistant: Use a dict." in transcript
    chat = await request(client, "chat/get", {"chatId": new["chatId"]})
    assert chat["compressedFrom"] == sent["chatId"]
    assert chat["messages"] == [
        {
            "role": "assistant",
            "blocks": [
                {"type": "text", "text": "# Chat Summary\n\nThe user asked how to count words."}
            ],
        }
    ]
    original = await request(client, "chat/get", {"chatId": sent["chatId"]})
    assert len(original["messages"]) == 2  # untouched
    listed = {c["chatId"]: c for c in await request(client, "chat/list", {})}
    assert listed[new["chatId"]]["compressedFrom"] == sent["chatId"]


async def test_two_chats_streaming_at_once_do_not_mix(client, lsp_home, replay):
    events = await start(client)
    words_a = [f"a{n} " for n in range(8)]
    words_b = [f"b{n} " for n in range(8)]
    replay.script("/v1/chat/completions", chat_reply(*words_a, delay=0.02))
    replay.script("/v1/chat/completions", chat_reply(*words_b, delay=0.02))
    first = await request(client, "chat/send", {"message": "chat A"})
    second = await request(client, "chat/send", {"message": "chat B"})
    assert first["chatId"] != second["chatId"]
    await events.terminal(first["requestId"])
    await events.terminal(second["requestId"])
    by_chat = {
        first["chatId"]: texts([e for e in events.items if e["chatId"] == first["chatId"]]),
        second["chatId"]: texts([e for e in events.items if e["chatId"] == second["chatId"]]),
    }
    assert sorted(by_chat.values()) == sorted(["".join(words_a), "".join(words_b)])
    for chat_id, text in by_chat.items():
        chat = await request(client, "chat/get", {"chatId": chat_id})
        assert chat["messages"][1]["blocks"][0]["text"] == text


async def test_completion_is_answered_while_a_chat_streams(client, lsp_home, replay):
    events = await start(client)
    replay.script("/v1/chat/completions", held_reply("slow"))
    sent = await request(client, "chat/send", {"message": "Take your time"})
    await events.first(sent["requestId"], "text")
    path = lsp_home / "project" / "add.py"
    path.write_text("def add(a, b):\n    return \n")
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, path.read_text()))
    )
    replay.script("/v1/completions", completion_reply("a + b"))
    result = await asyncio.wait_for(
        client.text_document_inline_completion_async(
            types.InlineCompletionParams(
                context=types.InlineCompletionContext(
                    trigger_kind=types.InlineCompletionTriggerKind.Invoked
                ),
                text_document=types.TextDocumentIdentifier(uri),
                position=types.Position(1, 11),
            )
        ),
        5,
    )
    items = result.items if hasattr(result, "items") else result
    assert items and items[0].insert_text.endswith("a + b")
    chat = await request(client, "chat/get", {"chatId": sent["chatId"]})
    assert chat["busy"] is True
    await request(client, "chat/cancel", {"chatId": sent["chatId"]})
    assert (await events.terminal(sent["requestId"]))["kind"] == "cancelled"


async def test_tokens_are_estimated_then_calibrated_by_usage(client, lsp_home, replay):
    events = await start(client)
    estimate = await request(client, "chat/tokens", {"draft": "x" * 400})
    assert estimate == {"estimate": 100, "fromUsage": False}
    replay.script("/v1/messages", Reply(fixture="anthropic/stream_thinking_signature_text.sse"))
    sent = await request(client, "chat/send", {"message": "Hi", "agent": "Claude Chat — Sonnet"})
    await events.terminal(sent["requestId"])
    usage = next(e for e in events.of(sent["requestId"]) if e["kind"] == "usage")
    after = await request(client, "chat/tokens", {"chatId": sent["chatId"], "draft": "x" * 40})
    assert after["fromUsage"] is True
    floor = usage["inputTokens"] + usage["cachedTokens"] + 10
    assert after["estimate"] > floor  # plus the answer that was added since


async def test_work_done_progress_follows_the_request(client, lsp_home, replay):
    events = await start(client)
    replay.script("/v1/chat/completions", chat_reply(*["x" * 150] * 3))
    client.progress_reports["chat-1"] = []  # the client made this token
    sent = await request(client, "chat/send", {"message": "Hi", "workDoneToken": "chat-1"})
    await events.terminal(sent["requestId"])
    for _ in range(50):
        reports = client.progress_reports.get("chat-1", [])
        if reports and isinstance(reports[-1], types.WorkDoneProgressEnd):
            break
        await asyncio.sleep(0.05)
    assert isinstance(reports[0], types.WorkDoneProgressBegin)
    assert [r.message for r in reports[1:]] == ["300 characters", "finished"]


async def test_delete_removes_the_chat_and_its_attachments(client, lsp_home, replay):
    (lsp_home / "project/a.txt").write_text("attached")
    events = await start(client)
    replay.script("/v1/chat/completions", chat_reply("ok"))
    sent = await request(
        client,
        "chat/send",
        {"message": "hi", "attachments": [(lsp_home / "project/a.txt").as_uri()]},
    )
    await events.terminal(sent["requestId"])
    history = lsp_home / "data/chat_history"
    assert (history / f"{sent['chatId']}.json").exists()
    assert await request(client, "chat/delete", {"chatId": sent["chatId"]}) is None
    assert list(history.iterdir()) == []
    with pytest.raises(JsonRpcInvalidParams):
        await request(client, "chat/get", {"chatId": sent["chatId"]})


async def test_agents_list_for_the_picker(client, lsp_home, replay):
    await start(client)
    agents = await request(client, "agents/list", {"pipeline": "chatAssistant"})
    assert [a["name"] for a in agents] == ["Embedded Chat", "Claude Chat — Sonnet"]
    assert set(agents[0]) >= {"name", "description", "provider", "model", "pipelines", "tools"}
    every = await request(client, "agents/list", {})
    assert len(every) > 50


def _png(width: int, height: int) -> bytes:
    import struct
    import zlib

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IEND", b"")


async def test_auto_compression_sends_into_the_summarised_chat(client, lsp_home, replay):
    client.init_params.initialization_options = {
        "qodeassist": {"chat": {"auto_compress": True, "auto_compress_threshold": 1000}}
    }
    events = await start(client)
    replay.script("/v1/chat/completions", chat_reply("word " * 1000))
    first = await request(client, "chat/send", {"message": "Tell me everything"})
    await events.terminal(first["requestId"])
    replay.script("/v1/chat/completions", chat_reply("A long talk about words."))
    replay.script("/v1/chat/completions", chat_reply("Short answer."))
    second = await request(client, "chat/send", {"chatId": first["chatId"], "message": "And?"})
    assert second["chatId"] != first["chatId"]
    await events.terminal(second["requestId"])
    chat = await request(client, "chat/get", {"chatId": second["chatId"]})
    assert chat["compressedFrom"] == first["chatId"]
    texts_sent = [m["blocks"][0]["text"] for m in chat["messages"]]
    assert texts_sent == [
        "# Chat Summary\n\nA long talk about words.",
        "And?",
        "Short answer.",
    ]


async def test_link_open_files_sends_every_open_document(client, lsp_home, replay):
    client.init_params.initialization_options = {  # no completion warm-up of the opened files
        "qodeassist": {
            "chat": {"link_open_files": True},
            "completion": {"warm_cursor_window": False},
        }
    }
    project = lsp_home / "project"
    (project / ".qodeassistignore").write_text("private.py\n")
    events = await start(client)
    for name, text in (("open.py", "OPEN BUFFER"), ("private.py", "PRIVATE BUFFER")):
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem((project / name).as_uri(), "python", 1, text)
            )
        )
    replay.script("/v1/chat/completions", chat_reply("ok"))
    sent = await request(client, "chat/send", {"message": "What is open?"})
    await events.terminal(sent["requestId"])
    joined = json.dumps(replay.last.json["messages"])
    assert "File: open.py" in joined and "OPEN BUFFER" in joined
    assert "PRIVATE BUFFER" not in joined
