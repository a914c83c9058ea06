"""Lines of stdin screened before the SDK reads them: messages pass, the rest is answered."""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

import pytest
from acp.connection import StreamDirection, StreamEvent

from qodeassist_lsp.acp_agent.stdin_guard import Answers, StdinGuard, screen


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}',
        b'{"jsonrpc": "2.0", "id": "a", "method": "session/cancel"}',
        b'{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "x"}}',
        b'{"jsonrpc": "2.0", "id": 3, "result": {}}',
        b'{"jsonrpc": "2.0", "id": null, "error": {"code": -1, "message": "x"}}',
        '{"id": 1, "method": "m", "params": ["Привет 你好 שלום 🙂 e\\u0301 \\u0000"]}'.encode(),
    ],
)
def test_messages_pass_unchanged(line: bytes) -> None:
    assert screen(line).line == line + b"\n" and screen(line).answer is None


@pytest.mark.parametrize(
    ("line", "answer_id", "code", "says"),
    [
        (b"{this is not json", None, -32700, "not JSON"),
        (b"\xff\xfe{", None, -32700, "not JSON"),
        (b"[" * 100_000, None, -32700, "nested too deeply"),
        (b"[]", None, -32600, "batches"),
        (b'[{"id": 1, "method": "m"}]', None, -32600, "batches"),
        (b"42", None, -32600, "not int 42"),
        (b'"str"', None, -32600, "not str"),
        (b"true", None, -32600, "not bool"),
        (b"{}", None, -32600, '"method"'),
        (b'{"id": {"a": 1}, "method": "m"}', None, -32600, '"id"'),
        (b'{"id": true, "method": "m"}', None, -32600, '"id"'),
        (b'{"id": 5, "method": ["m"]}', 5, -32600, '"method" must be a string'),
        (b'{"id": 6, "method": "m", "params": 1}', 6, -32600, '"params"'),
        (b'{"jsonrpc": "1.0", "id": 7, "method": "m"}', 7, -32600, '"jsonrpc"'),
    ],
)
def test_what_is_not_a_message_is_answered(
    line: bytes, answer_id: Any, code: int, says: str
) -> None:
    screened = screen(line)
    assert screened.line is None and screened.answer is not None
    assert screened.answer["jsonrpc"] == "2.0" and screened.answer["id"] == answer_id
    assert screened.answer["error"]["code"] == code
    assert says in screened.answer["error"]["data"]["message"]


def test_blank_lines_are_dropped_and_a_malformed_error_response_is_made_well_formed() -> None:
    assert screen(b"  \r\n") == screen(b"")
    assert screen(b"").line is None and screen(b"").answer is None
    fixed = screen(b'{"jsonrpc": "2.0", "id": 3, "error": "boom"}')
    assert fixed.answer is None and fixed.line is not None
    message = json.loads(fixed.line)
    assert message["id"] == 3 and message["error"]["code"] == -32603
    assert "boom" in message["error"]["message"]


class _Writer:
    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    async def drain(self) -> None:
        pass


async def test_the_guard_feeds_messages_answers_the_rest_and_ends_with_stdin() -> None:
    source = asyncio.StreamReader(limit=64)
    long = json.dumps({"id": 2, "method": "m", "params": {"text": "x" * 500}}).encode()
    source.feed_data(b"[]\n" + long + b"\nnot json\n" + b'{"id": 9, "method": "last"}')
    source.feed_eof()
    writer = _Writer()
    guard = StdinGuard(source, cast("asyncio.StreamWriter", writer), 64)
    await guard.run()
    answers = [json.loads(line) for line in writer.data.splitlines()]
    assert [(a["id"], a["error"]["code"]) for a in answers] == [(None, -32600), (None, -32700)]
    passed = await guard.reader.read()
    assert passed == long + b'\n{"id": 9, "method": "last"}\n'


async def test_a_file_ends_the_sdk_input_once_its_requests_are_answered() -> None:
    source = asyncio.StreamReader()
    source.feed_data(b'{"id": 1, "method": "a"}\n{"id": "b", "method": "b"}\n{"method": "n"}\n')
    source.feed_eof()
    answers = Answers()
    guard = StdinGuard(source, cast("asyncio.StreamWriter", _Writer()), 64, answers)
    screening = asyncio.create_task(guard.run())
    assert len(await guard.reader.readline()) > 0
    answers(StreamEvent(StreamDirection.OUTGOING, {"id": 1, "result": {}}))
    answers(StreamEvent(StreamDirection.OUTGOING, {"method": "session/update"}))
    await asyncio.sleep(0)
    assert not guard.reader.at_eof() and not screening.done()  # "b" is still owed
    answers(StreamEvent(StreamDirection.OUTGOING, {"id": "b", "error": {}}))
    await screening
    assert len((await guard.reader.read()).splitlines()) == 2  # then the SDK's input ends


async def test_a_question_to_a_file_ends_the_sdk_input_as_no_answer_will_come() -> None:
    answers = Answers()
    answers.read({"id": 1, "method": "session/prompt"})
    answers(StreamEvent(StreamDirection.OUTGOING, {"id": 0, "method": "fs/read_text_file"}))
    await asyncio.wait_for(answers.settled(), 5)
    answers.read({"id": 0, "result": {}})  # answered after all: wait for the prompt again
    settling = asyncio.create_task(answers.settled())
    await asyncio.sleep(0)
    assert not settling.done()
    answers(StreamEvent(StreamDirection.OUTGOING, {"id": 1, "result": {}}))
    await asyncio.wait_for(settling, 5)
