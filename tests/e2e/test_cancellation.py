"""Cancelling a streaming request ends it with ``cancelled`` and closes the upstream connection.

The replay server sends the first half of a recorded stream and then holds the response open,
unfinished, the way a slow model does; it notes the moment the client's socket closes.
"""

from __future__ import annotations

import contextlib
import json
import queue
import signal
import threading
import time

import pytest

from qodeassist_lsp.core.content import user_text
from qodeassist_lsp.core.events import CancelledEvent, FinishedEvent, TextEvent
from qodeassist_lsp.core.runtime import Runtime
from tests.support.replay_server import ReplayServer, Reply, fixture_bytes, split_body
from tests.support.wire_cases import TARGETS
from tests.support.workspace import Workspace

CLOSE_WITHIN = 0.1  # seconds from cancel to the server seeing the socket closed

HALVES = {
    "claude": "anthropic/stream_text_hello.sse",
    "openai": "openai_chat/stream_text_with_usage.sse",
    "ollama": "ollama/chat_stream_excerpt_sk.ndjson",
    "gemini": "gemini/sse_text.sse",
    "responses": "openai_responses/stream_text.sse",
}


def first_half(name: str) -> Reply:
    """The first half of a recorded stream's events, then the response is held open."""
    pieces = split_body(fixture_bytes(name), "events", "." + name.rsplit(".", 1)[-1])
    body = b"".join(pieces[: max(1, len(pieces) // 2 + 1)])
    kind = name.rsplit(".", 1)[-1]
    content_type = {"sse": "text/event-stream", "ndjson": "application/x-ndjson"}[kind]
    return Reply(body=body, content_type=content_type, split="events", hold_open=True)


@pytest.mark.parametrize("how", ["request", "session"])
@pytest.mark.parametrize("target", sorted(HALVES))
async def test_cancel_mid_stream(
    replay: ReplayServer, runtime: Runtime, target: str, how: str
) -> None:
    agent = TARGETS[target]
    replay.script(agent.route, first_half(HALVES[target]))
    session = runtime.sessions.create(agent.agent)
    request = session.send(user_text("Tell me a long story."))
    events = []
    async for event in request.events():
        events.append(event)
        if isinstance(event, TextEvent):
            break
    [upstream] = await replay.wait_for_requests_async(1)
    assert await upstream.wait_holding_async(5)
    assert not upstream.disconnected.is_set()

    cancelled_at = time.monotonic()
    (request if how == "request" else session).cancel()
    events += [event async for event in request.events()]
    terminal = await request.wait()

    assert isinstance(terminal, CancelledEvent), events
    assert events[-1] is terminal and terminal.request_id == request.id
    assert [e.kind for e in events].count("cancelled") == 1
    assert not [e for e in events if e.kind in ("failed", "finished")]
    assert await upstream.wait_disconnected_async(2), "the upstream connection stayed open"
    assert upstream.disconnected_at - cancelled_at < CLOSE_WITHIN
    assert not session.busy


async def test_cancel_before_the_first_byte(replay: ReplayServer, runtime: Runtime) -> None:
    agent = TARGETS["claude"]
    replay.script(agent.route, Reply(hold_open=True, content_type="text/event-stream"))
    session = runtime.sessions.create(agent.agent)
    request = session.send(user_text("hi"))
    [upstream] = await replay.wait_for_requests_async(1)
    assert await upstream.wait_holding_async(5)
    cancelled_at = time.monotonic()
    request.cancel()
    terminal = await request.wait()
    assert isinstance(terminal, CancelledEvent)
    assert [e.kind async for e in request.events()] == ["cancelled"]
    assert await upstream.wait_disconnected_async(2)
    assert upstream.disconnected_at - cancelled_at < CLOSE_WITHIN


async def test_a_new_send_cancels_the_request_in_flight(
    replay: ReplayServer, runtime: Runtime
) -> None:
    agent = TARGETS["claude"]
    replay.script(
        agent.route, [first_half(HALVES["claude"]), Reply("anthropic/stream_text_hello.sse")]
    )
    session = runtime.sessions.create(agent.agent)
    first = session.send(user_text("one"))
    [upstream] = await replay.wait_for_requests_async(1)
    assert await upstream.wait_holding_async(5)
    sent_at = time.monotonic()
    second = session.send(user_text("two"))
    assert isinstance(await first.wait(), CancelledEvent)
    assert isinstance(await second.wait(), FinishedEvent)
    assert await upstream.wait_disconnected_async(2)
    assert upstream.disconnected_at - sent_at < CLOSE_WITHIN
    assert len(replay.requests) == 2


def test_sigint_cancels_the_cli(workspace: Workspace, replay: ReplayServer) -> None:
    agent = TARGETS["claude"]
    replay.script(agent.route, first_half(HALVES["claude"]))
    process = workspace.popen(
        "chat", "--agent", agent.agent, "--events", "jsonl", "Tell me a story", interruptible=True
    )
    lines: queue.Queue[str | None] = queue.Queue()
    errors: list[str] = []

    def pump_stdout() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put(None)

    def pump_stderr() -> None:
        assert process.stderr is not None
        errors.extend(process.stderr)

    pumps = [threading.Thread(target=f, daemon=True) for f in (pump_stdout, pump_stderr)]
    for pump in pumps:
        pump.start()
    events = []
    try:
        deadline = time.monotonic() + 30
        while not any(e["kind"] == "text" for e in events):
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            assert line is not None, "".join(errors)
            events.append(json.loads(line))
        [upstream] = replay.wait_for_requests(1)
        assert upstream.wait_holding(5)
        interrupted_at = time.monotonic()
        process.send_signal(signal.SIGINT)
        process.wait(20)
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        process.wait(10)
        for pump in pumps:
            pump.join(5)
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
    while (line := lines.get(timeout=1)) is not None:
        events.append(json.loads(line))
    stderr = "".join(errors)

    assert upstream.wait_disconnected(2), "the upstream connection stayed open"
    assert upstream.disconnected_at - interrupted_at < CLOSE_WITHIN
    kinds = [e["kind"] for e in events]
    assert kinds[-1] == "cancelled" and kinds.count("cancelled") == 1, kinds
    assert "failed" not in kinds and "finished" not in kinds
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr, stderr
