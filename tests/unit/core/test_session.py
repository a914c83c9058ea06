"""Session behaviour over ``httpx.MockTransport`` (the loopback e2e suite covers real HTTP)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from qodeassist_lsp.config.paths import bundled_root
from qodeassist_lsp.config.secrets import SecretStore
from qodeassist_lsp.core.agent import AgentFactory
from qodeassist_lsp.core.content import TextBlock, ToolResultBlock, ToolUseBlock, user_text
from qodeassist_lsp.core.events import (
    CancelledEvent,
    FailedEvent,
    FinishedEvent,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
    UsageEvent,
)
from qodeassist_lsp.core.policy import RequestPolicy
from qodeassist_lsp.core.provider import GenericProvider
from qodeassist_lsp.core.session import Session
from qodeassist_lsp.core.tools import ToolContext, ToolOutput
from qodeassist_lsp.wire.retry import RetryPolicy
from qodeassist_lsp.wire.tools import ToolSpec


def sse(*chunks: dict[str, Any]) -> bytes:
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def text_stream(*parts: str) -> bytes:
    deltas = [{"choices": [{"index": 0, "delta": {"content": p}}]} for p in parts]
    return sse(
        *deltas,
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 3}},
    )


def tool_stream(call_id: str = "call_1", args: str = '{"t":"hi"}') -> bytes:
    return sse(
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": call_id,
                                "type": "function",
                                "function": {"name": "echo", "arguments": ""},
                            }
                        ]
                    },
                }
            ]
        },
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "function": {"arguments": args}}]},
                }
            ]
        },
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}},
    )


class Echo:
    permission = "read"
    spec = ToolSpec("echo", "Echo", {"type": "object", "properties": {"t": {"type": "string"}}})

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        return ToolOutput(f"echo:{arguments['t']}")


class Hang(httpx.AsyncByteStream):
    def __init__(self, first: bytes, closed: asyncio.Event) -> None:
        self.first, self.closed = first, closed

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.first
        await asyncio.Event().wait()

    async def aclose(self) -> None:
        self.closed.set()


Handler = Callable[[httpx.Request], httpx.Response]


@pytest.fixture
async def make_session(tree, tmp_path) -> AsyncIterator[Callable[..., tuple[Session, list]]]:
    base = (bundled_root() / "agents" / "openai_base_chat.toml").read_text(encoding="utf-8")
    tree.write("bundled/agents/openai_base_chat.toml", base)
    tree.write(
        "config/agents/tools.toml",
        'name = "Tooled"\nextends = "OpenAI Base Chat"\nprovider_instance = "Local"\n'
        'model = "m"\nenable_tools = true\n',
    )
    config = tree.load()
    factory = AgentFactory(config)
    providers: list[GenericProvider] = []

    def make(handler: Handler, agent: str = "Tooled", **policy: Any):
        seen: list[dict[str, Any]] = []

        def record(request: httpx.Request) -> httpx.Response:
            seen.append(json.loads(request.content))
            return handler(request)

        provider = GenericProvider(
            config.providers["Local"],
            SecretStore(tmp_path, environ={}),
            transport=httpx.MockTransport(record),
        )
        providers.append(provider)
        session = Session(
            factory.create(agent),
            provider,
            prompt_roots=config.prompt_roots(),
            policy=RequestPolicy(retry=RetryPolicy(max_attempts=1), **policy),
        )
        return session, seen

    yield make
    for provider in providers:
        await provider.aclose()


def reply(body: bytes, status: int = 200) -> httpx.Response:
    return httpx.Response(status, headers={"content-type": "text/event-stream"}, content=body)


def hanging(make_session, text: str) -> tuple[Session, asyncio.Event]:
    """A session whose provider streams ``text`` and then hangs; the event is set on close."""
    closed = asyncio.Event()
    first = f'data: {{"choices":[{{"index":0,"delta":{{"content":"{text}"}}}}]}}\n\n'.encode()
    session, _ = make_session(
        lambda r: httpx.Response(
            200, headers={"content-type": "text/event-stream"}, stream=Hang(first, closed)
        )
    )
    return session, closed


async def collect(request) -> list[Any]:
    return [event async for event in request.events()]


async def test_text_stream_events_and_history(make_session) -> None:
    session, seen = make_session(lambda r: reply(text_stream("Hel", "lo")), agent="Chat")
    events = await collect(session.send(user_text("hi")))
    assert [type(e) for e in events] == [TextEvent, TextEvent, UsageEvent, FinishedEvent]
    assert events[-1].stop_reason == "end_turn"
    assert (events[2].input_tokens, events[2].output_tokens) == (10, 3)
    assert [m.role for m in session.history.messages] == ["user", "assistant"]
    assert session.history.last_assistant_text() == "Hello"
    assert seen[0]["messages"] == [{"role": "user", "content": "hi"}]
    assert "tools" not in seen[0]


async def test_tool_round_trip_sends_result_and_finishes(make_session) -> None:
    replies = iter([tool_stream(), text_stream("done")])
    session, seen = make_session(lambda r: reply(next(replies)))
    session.tools.register(Echo())
    events = await collect(session.send(user_text("use the tool")))
    kinds = [e.kind for e in events]
    assert kinds == ["toolCall", "toolResult", "text", "usage", "finished"]
    assert events[0] == ToolCallEvent(events[0].request_id, "call_1", "echo", {"t": "hi"}, "read")
    assert events[1] == ToolResultEvent(events[0].request_id, "call_1", "echo", "echo:hi")
    assert (events[3].input_tokens, events[3].output_tokens) == (15, 5)  # summed over rounds
    assert seen[0]["tools"][0]["function"]["name"] == "echo"
    assert seen[1]["messages"][1:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "echo", "arguments": '{"t":"hi"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "echo:hi"},
    ]
    history = session.history.messages
    assert history[1].blocks == (ToolUseBlock("call_1", "echo", {"t": "hi"}),)
    assert history[2].blocks == (ToolResultBlock("call_1", "echo", "echo:hi"),)
    assert history[3].blocks == (TextBlock("done"),)


async def test_tool_round_limit_fails_with_tool_category(make_session) -> None:
    session, seen = make_session(lambda r: reply(tool_stream()), max_tool_rounds=2)
    session.tools.register(Echo())
    terminal = await session.send(user_text("loop")).wait()
    assert isinstance(terminal, FailedEvent) and terminal.error.category == "tool"
    assert "max_tool_continuations" in terminal.error.message
    assert len(seen) == 3


async def test_tool_calls_without_enabled_tools_just_finish(make_session) -> None:
    session, seen = make_session(lambda r: reply(tool_stream()), agent="Chat")
    terminal = await session.send(user_text("x")).wait()
    assert terminal == FinishedEvent(terminal.request_id, "tool_use", "Chat") and len(seen) == 1


async def test_failure_before_any_byte_rolls_back_history(make_session) -> None:
    body = b'{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}'
    session, _ = make_session(
        lambda r: httpx.Response(401, headers={"content-type": "application/json"}, content=body)
    )
    terminal = await session.send(user_text("hi")).wait()
    assert isinstance(terminal, FailedEvent) and terminal.error.category == "auth"
    assert len(session.history) == 0


async def test_cancel_closes_the_stream_and_reports_cancelled(make_session) -> None:
    session, closed = hanging(make_session, "partial")
    request = session.send(user_text("hi"))
    events = request.events()
    assert isinstance(await anext(events), TextEvent)
    request.cancel()
    assert await request.wait() == CancelledEvent(request.id)
    await asyncio.wait_for(closed.wait(), 0.1)
    assert [e async for e in events] == [CancelledEvent(request.id)]


async def test_new_send_cancels_the_one_in_flight(make_session) -> None:
    closed = asyncio.Event()
    first = b'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n'
    replies = iter([httpx.Response(200, stream=Hang(first, closed)), reply(text_stream("b"))])
    session, _ = make_session(lambda r: next(replies))
    old = session.send(user_text("one"))
    await anext(old.events())
    new = session.send(user_text("two"))
    assert isinstance(await old.wait(), CancelledEvent)
    assert isinstance(await new.wait(), FinishedEvent)


async def test_empty_send_fails_fast_with_validation(make_session) -> None:
    session, seen = make_session(lambda r: reply(text_stream("x")))
    terminal = await session.send(()).wait()
    assert isinstance(terminal, FailedEvent) and terminal.error.category == "validation"
    assert seen == [] and len(session.history) == 0


async def test_system_prompt_error_fails_before_sending(tree, make_session) -> None:
    session, seen = make_session(lambda r: reply(text_stream("x")))
    session.agent.profile.__dict__["system_prompt"] = "{{ read_file(':/personas/none.md') }}"
    terminal = await session.send(user_text("hi")).wait()
    assert isinstance(terminal, FailedEvent) and terminal.error.category == "validation"
    assert seen == [] and len(session.history) == 0


async def test_listeners_see_every_event_and_a_broken_one_is_contained(make_session) -> None:
    session, _ = make_session(lambda r: reply(text_stream("a")), agent="Chat")
    got: list[str] = []
    session.listeners.append(lambda e: got.append(e.kind))
    session.listeners.append(lambda e: 1 / 0)
    assert isinstance(await session.send(user_text("hi")).wait(), FinishedEvent)
    assert got == ["text", "usage", "finished"]


async def test_tool_calls_without_registered_tools_just_finish(make_session) -> None:
    session, seen = make_session(lambda r: reply(tool_stream()))
    terminal = await session.send(user_text("x")).wait()
    assert terminal == FinishedEvent(terminal.request_id, "tool_use", "Tooled") and len(seen) == 1
    assert "tools" not in seen[0]


async def test_cancel_before_the_task_ran_still_ends_the_request(make_session) -> None:
    session, seen = make_session(lambda r: reply(text_stream("x")))
    request = session.send(user_text("hi"))
    request.cancel()
    assert await asyncio.wait_for(request.wait(), 1) == CancelledEvent(request.id)
    assert seen == []


async def test_exchange_runs_in_the_callers_task_and_hands_over_every_event(make_session) -> None:
    session, _ = make_session(lambda r: reply(text_stream("Hel", "lo")), agent="Chat")
    caller = asyncio.current_task()
    seen: list[tuple[type, bool]] = []
    request = await session.exchange(
        user_text("hi"), lambda e: seen.append((type(e), asyncio.current_task() is caller))
    )
    assert seen == [(TextEvent, True), (TextEvent, True), (UsageEvent, True), (FinishedEvent, True)]
    assert request.done and session.history.last_assistant_text() == "Hello"
    with pytest.raises(RuntimeError, match="listeners"):
        await anext(request.events())  # its events went to the listener, not to a queue


async def test_exchange_stops_after_the_event_whose_listener_cancels(make_session) -> None:
    session, closed = hanging(make_session, "enough")
    seen: list[Any] = []

    def listener(event: Any) -> None:
        seen.append(event)
        if isinstance(event, TextEvent):
            session.cancel()  # e.g. a completion that has its line

    request = await asyncio.wait_for(session.exchange(user_text("hi"), listener), 1.0)
    assert [type(e) for e in seen] == [TextEvent, CancelledEvent]
    assert await request.wait() == CancelledEvent(request.id)
    assert closed.is_set()  # the stream was closed, not left hanging


async def test_cancelling_the_task_running_an_exchange_cancels_it(make_session) -> None:
    closed = asyncio.Event()
    first = b'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n'
    session, _ = make_session(lambda r: httpx.Response(200, stream=Hang(first, closed)))
    seen: list[Any] = []
    arrived = asyncio.Event()

    def listener(event: Any) -> None:
        seen.append(event)
        arrived.set()

    task = asyncio.create_task(session.exchange(user_text("hi"), listener))
    await asyncio.wait_for(arrived.wait(), 1.0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [type(e) for e in seen] == [TextEvent, CancelledEvent] and closed.is_set()


async def test_an_empty_exchange_fails_without_sending(make_session) -> None:
    session, seen = make_session(lambda r: reply(text_stream("x")))
    events: list[Any] = []
    request = await session.exchange((), events.append)
    assert [type(e) for e in events] == [FailedEvent] and request.done and seen == []


PERSONA_LOOP = "I am a helpful software engineer who writes clean code.\n"
"""Issue 15: ``chat "hi"`` on the embedded base model printed this kind of line over and over."""


async def test_a_looping_answer_is_stopped_with_a_repetition_stop(make_session) -> None:
    closed = asyncio.Event()
    first = b"".join(
        f"data: {json.dumps({'choices': [{'index': 0, 'delta': {'content': part}}]})}\n\n".encode()
        for part in ["Hello!\n", *[PERSONA_LOOP] * 5]
    )
    session, _ = make_session(
        lambda r: httpx.Response(
            200, headers={"content-type": "text/event-stream"}, stream=Hang(first, closed)
        ),
        agent="Chat",
    )
    request = session.send(user_text("hi"))
    events = await asyncio.wait_for(collect(request), 2)
    assert isinstance(events[-1], FinishedEvent)
    assert events[-1].stop_reason == "repetition"
    answer = "".join(e.text for e in events if isinstance(e, TextEvent))
    assert answer.count(PERSONA_LOOP) == 3  # stopped at the third copy, not at max_tokens
    await asyncio.wait_for(closed.wait(), 1)  # the stream was closed, not drained


async def test_code_with_short_repeated_lines_is_not_a_loop(make_session) -> None:
    code = "".join(f"if x == {i}:\n    return None\n}}\n" for i in range(10))
    session, _ = make_session(lambda r: reply(text_stream(code)), agent="Chat")
    events = await collect(session.send(user_text("hi")))
    assert events[-1].stop_reason == "end_turn"


async def test_a_tool_call_cut_off_by_max_tokens_is_shown_as_a_failed_call(make_session) -> None:
    cut = tool_stream(args='{"t": "unfinis').replace(b'"tool_calls"}', b'"length"}')
    session, seen = make_session(lambda r: reply(cut))
    echo = Echo()
    session.tools.register(echo)
    events = await collect(session.send(user_text("use the tool")))
    assert [e.kind for e in events] == ["toolCall", "toolResult", "usage", "finished"]
    call, result = events[0], events[1]
    assert (call.id, call.name, call.arguments, call.permission) == ("call_1", "echo", {}, "read")
    assert result.tool_use_id == "call_1" and result.is_error
    assert "output token limit" in result.content and "not run" in result.content
    assert events[-1].stop_reason == "max_tokens" and len(seen) == 1
    blocks = [block for message in session.history.messages for block in message.blocks]
    assert not any(isinstance(block, ToolUseBlock) for block in blocks)  # not kept, not run
