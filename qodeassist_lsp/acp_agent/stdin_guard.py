"""`StdinGuard`: lines of stdin the ACP SDK would choke on are answered here and never reach it.

The SDK reads one JSON-RPC message per line and assumes each is a JSON object with a hashable
``id``: ``[]``, ``42`` or ``"str"`` (its ``message.get``) and an ``id`` like ``[1]`` end its
receive loop, so the agent stops serving; a line that is not JSON is only logged, so the client
never hears of it. The agent therefore hands the SDK a reader it feeds itself: every line of
stdin goes through `screen` and is either passed on unchanged or answered on stdout the way
JSON-RPC 2.0 asks — ``-32700`` (parse error, ``id: null``) for a line that is not JSON,
``-32600`` (invalid request) for JSON that is not a request, notification or response object,
with the request's ``id`` when it has a usable one, else ``null``. Batches are not supported
(ACP sends one message per line): an array, empty or not, gets one ``-32600`` with ``id: null``.
A response whose ``error`` is not an object reaches the SDK with a well-formed one, so the
request that waits for it fails instead of breaking the loop; responses are never answered.

ACP's unstable next-edit methods (``nes/*``, ``document/*``, `UNSTABLE_METHODS`) are declared
by the SDK but routed by none of its agent routes; everything whose name starts with ``_`` it
hands to the agent's public extension hooks (``ext_method``, ``ext_notification``) with the
underscore removed. The guard therefore passes those methods on as ``_nes/start`` and the like,
and the agent's hooks route them (``acp_agent/operations.py``): the client never sees the name,
as an answer carries only the request's ``id``.

A file (or a terminal) is not a client that goes away: when such a stdin ends, the guard first
waits for `Answers` to see every request of it answered (or the agent waiting on a question the
file cannot answer), then ends the SDK's input, so ``acp < requests.jsonl`` prints the answers.
The end of a pipe or socket is an editor gone: the SDK's input ends at once, as before.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from typing import Any

from acp import AGENT_METHODS, RequestError
from acp.connection import StreamDirection, StreamEvent

log = logging.getLogger("qodeassist.acp")

_SHOWN_LINE = 200
"""How much of a refused line the log shows."""

UNSTABLE_METHODS: frozenset[str] = frozenset(
    method for key, method in AGENT_METHODS.items() if key.startswith(("nes_", "document_"))
)
"""ACP's next-edit methods the SDK declares but does not route: passed on as extensions."""


@dataclass(frozen=True)
class Screened:
    """What to do with one line: pass ``line`` on to the SDK, or write ``answer`` to the client."""

    line: bytes | None = None
    answer: dict[str, Any] | None = None


def _answer(error: RequestError, request_id: Any = None) -> Screened:
    return Screened(answer={"jsonrpc": "2.0", "id": request_id, "error": error.to_error_obj()})


def _invalid(message: str, request_id: Any = None) -> Screened:
    return _answer(RequestError.invalid_request({"message": message}), request_id)


def _usable_id(value: Any) -> bool:
    """Whether ``value`` is a JSON-RPC id: a string, a number or null (not a boolean)."""
    return value is None or (isinstance(value, str | int | float) and not isinstance(value, bool))


def screen(raw: bytes) -> Screened:
    """Return whether one line of stdin goes to the SDK, or the error that answers it."""
    text = raw.strip()
    if not text:
        return Screened()
    try:
        message = json.loads(text)
    except (ValueError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        return _answer(
            RequestError.parse_error(
                {"message": f"the line is not JSON ({why}); send one JSON-RPC message per line"}
            )
        )
    if isinstance(message, list):
        return _invalid(
            "batches (JSON arrays) are not supported; send one JSON-RPC message object per line"
        )
    if not isinstance(message, dict):
        return _invalid(
            f"a JSON-RPC message must be a JSON object, not {type(message).__name__} "
            f"{json.dumps(message, ensure_ascii=False)[:40]}"
        )
    return _screen_object(message, raw)


def _screen_object(message: dict[str, Any], raw: bytes) -> Screened:
    has_id = "id" in message
    request_id = message.get("id")
    if has_id and not _usable_id(request_id):
        return _invalid('"id" must be a string, a number or null')
    if "jsonrpc" in message and message["jsonrpc"] != "2.0":
        return _invalid('"jsonrpc" must be "2.0"', request_id)
    if "method" in message:
        if not isinstance(message["method"], str):
            return _invalid('"method" must be a string', request_id)
        if "params" in message and not isinstance(message["params"], dict | list):
            return _invalid('"params" must be an object or an array', request_id)
        if message["method"] in UNSTABLE_METHODS:
            extension = {**message, "method": f"_{message['method']}"}
            return Screened(line=json.dumps(extension).encode() + b"\n")
        return Screened(line=_line(raw))
    if not has_id:
        return _invalid(
            'a message needs a "method" (a request or a notification) or an "id" (a response)'
        )
    error = message.get("error")
    if error is not None and not isinstance(error, dict):
        fixed = {
            **message,
            "error": {"code": -32603, "message": f"malformed error in the response: {error!r}"},
        }
        return Screened(line=json.dumps(fixed).encode() + b"\n")
    return Screened(line=_line(raw))


def _line(raw: bytes) -> bytes:
    return raw if raw.endswith(b"\n") else raw + b"\n"


async def _read_line(source: asyncio.StreamReader) -> bytes:
    """Return the next line of ``source`` however long it is (b"" at the end)."""
    chunks: list[bytes] = []
    while True:
        try:
            chunks.append(await source.readuntil(b"\n"))
        except asyncio.LimitOverrunError as exc:
            chunks.append(await source.readexactly(exc.consumed))
            continue
        except asyncio.IncompleteReadError as exc:
            chunks.append(exc.partial)
        return b"".join(chunks)


class Answers:
    """Which requests the agent still owes the client, and whether it waits on the client.

    The guard notes each message it passes on (`read`: the SDK may not have read it yet); the
    SDK's connection calls it with each message it writes (its ``observers`` argument).
    """

    def __init__(self) -> None:
        """Nothing asked, nothing owed."""
        self._owed: set[Any] = set()
        self._asked: set[Any] = set()
        self._changed = asyncio.Event()

    def read(self, message: dict[str, Any]) -> None:
        """Note a request of the client, or its answer to one of the agent's."""
        self._note(message, self._owed, self._asked)

    def __call__(self, event: StreamEvent) -> None:
        """Note a message the agent wrote: its request, or its answer to one of the client's."""
        if event.direction is StreamDirection.OUTGOING:
            self._note(event.message, self._asked, self._owed)

    def _note(self, message: dict[str, Any], requests: set[Any], answered: set[Any]) -> None:
        if "id" not in message:
            return
        if "method" in message:
            requests.add(message["id"])
        else:
            answered.discard(message["id"])
        self._changed.set()

    async def settled(self) -> None:
        """Return once every request is answered, or the agent waits for the client."""
        while self._owed and not self._asked:
            self._changed.clear()
            await self._changed.wait()


class StdinGuard:
    """Feeds `reader` (the SDK's stdin) with the good lines of ``source``; answers the rest."""

    def __init__(
        self,
        source: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        limit: int,
        answers: Answers | None = None,
    ) -> None:
        """Screen ``source``; write answers with ``writer`` (the SDK's stdout writer).

        With ``answers`` (stdin a file), the SDK's input ends once they are `Answers.settled`.
        """
        self._source = source
        self._writer = writer
        self._answers = answers
        self.reader = asyncio.StreamReader(limit=limit)
        """What the SDK reads: the lines of stdin that are JSON-RPC messages."""

    async def run(self) -> None:
        """Screen every line until stdin ends (then the SDK's reader ends too)."""
        try:
            while line := await _read_line(self._source):
                screened = screen(line)
                if screened.answer is not None:
                    error = screened.answer["error"]
                    log.warning(
                        "stdin line refused (%s %s): %r",
                        error["code"],
                        error["data"]["message"],
                        line[:_SHOWN_LINE],
                    )
                    # One write per message, as the SDK's sender does: lines never interleave.
                    self._writer.write(json.dumps(screened.answer).encode() + b"\n")
                    await self._writer.drain()
                if screened.line is not None:
                    if self._answers is not None:
                        self._answers.read(json.loads(screened.line))
                    self.reader.feed_data(screened.line)
            if self._answers is not None:
                await self._answers.settled()
        except (ConnectionError, OSError) as exc:
            log.info("stdin or stdout closed: %s", exc)
        finally:
            self.reader.feed_eof()
