"""The sans-I/O parser contract and the mechanics every protocol parser shares.

A parser is fed raw body bytes (in any split) and returns `WireEvent` lists; ``close()`` at
EOF flushes and decides whether the stream was complete. Keeping parsers free of I/O lets
tests replay recorded bytes whole, byte by byte and in random splits. The shared base owns
the end-of-stream rules (one terminal event; a stream without its protocol's end marker
becomes a ``provider`` `StreamError`), tool-call argument parsing and the safety net that
turns a malformed payload into an error event instead of an exception.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from qodeassist_lsp.wire.classify import (
    bad_tool_arguments,
    classify_stream_error,
    stream_cut,
    unreadable_event,
)
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorContext, ErrorInfo
from qodeassist_lsp.wire.events import (
    MessageStop,
    StopReason,
    StreamError,
    ToolCallEnd,
    ToolCallStart,
    Usage,
    WireEvent,
)
from qodeassist_lsp.wire.jsonstream import JsonElementDecoder
from qodeassist_lsp.wire.ndjson import NDJSONDecoder
from qodeassist_lsp.wire.sse import ServerSentEvent, SSEDecoder
from qodeassist_lsp.wire.tools import new_tool_call_id, parse_arguments

IdFactory = Callable[[], str]
JsonObject = dict[str, Any]


class StreamParser(Protocol):
    """What the client needs from a protocol parser."""

    @property
    def ended(self) -> bool:
        """Whether a terminal event was produced (later input is ignored)."""
        ...

    def feed(self, data: bytes) -> list[WireEvent]:
        """Consume body bytes; return the events they completed."""
        ...

    def close(self) -> list[WireEvent]:
        """Signal EOF; return the final events (a `StreamError` if the stream was cut)."""
        ...


def obj(value: object) -> JsonObject:
    """``value`` if it is a JSON object, else an empty one (payloads are untrusted)."""
    return value if isinstance(value, dict) else {}


def text_of(value: object) -> str:
    """``value`` if it is a string, else ``""``."""
    return value if isinstance(value, str) else ""


def int_of(value: object) -> int:
    """``value`` if it is an integer, else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass(slots=True)
class PendingCall:
    """A tool call whose arguments are still arriving."""

    id: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)
    started: bool = False
    ended: bool = False


class ParserBase:
    """End-of-stream rules, event buffering and tool-call helpers shared by all parsers."""

    terminal_marker: ClassVar[str] = "its end marker"

    def __init__(
        self, *, context: ErrorContext | None = None, new_id: IdFactory = new_tool_call_id
    ) -> None:
        """Create a parser; ``context`` names the provider in messages."""
        self._ctx = context or ErrorContext()
        self._new_id = new_id
        self._out: list[WireEvent] = []
        self._ended = False
        self._usage: Usage | None = None
        self._tools_called = False

    @property
    def ended(self) -> bool:
        """Whether a terminal event was produced (later input is ignored)."""
        return self._ended

    def feed(self, data: bytes) -> list[WireEvent]:
        """Consume body bytes; return the events they completed."""
        if data and not self._ended:
            self._guarded(lambda: self._decode(data))
        return self._drain()

    def close(self) -> list[WireEvent]:
        """Signal EOF; return the final events."""
        if not self._ended:
            self._guarded(self._flush)
        if not self._ended:
            self._guarded(self._at_eof)
        self._ended = True
        return self._drain()

    # -- hooks for subclasses ---------------------------------------------------------------

    def _decode(self, data: bytes) -> None:
        raise NotImplementedError

    def _flush(self) -> None:
        """Process whatever the decoder still buffers at EOF."""

    def _at_eof(self) -> None:
        """Decide at EOF whether the stream was complete; by default it was cut."""
        self._fail(stream_cut(self._ctx, self.terminal_marker))

    # -- helpers ------------------------------------------------------------------------------

    def _guarded(self, step: Callable[[], None]) -> None:
        try:
            step()
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            # Payloads are untrusted: a shape we did not expect fails the stream, not the server.
            self._fail(
                ErrorInfo(
                    category=ErrorCategory.PROVIDER,
                    message=f"{self._ctx.subject} sent a stream event of an unexpected shape "
                    f"({type(exc).__name__}). Try again.",
                    provider_detail=str(exc),
                )
            )

    def _drain(self) -> list[WireEvent]:
        out, self._out = self._out, []
        return out

    def _emit(self, event: WireEvent) -> None:
        if not self._ended:
            self._out.append(event)

    def _fail(self, info: ErrorInfo) -> None:
        if not self._ended:
            self._out.append(StreamError(info))
            self._ended = True

    def _fail_with_payload(self, payload: object) -> None:
        info = classify_stream_error(payload, self._ctx)
        self._fail(info or unreadable_event(self._ctx, json.dumps(payload)[:2000]))

    def _finish(self, reason: StopReason, raw: str) -> None:
        if self._ended:
            return
        if reason == "end_turn" and self._tools_called:
            reason = "tool_use"
        if self._usage is not None:
            self._out.append(self._usage)
        self._out.append(MessageStop(reason, raw))
        self._ended = True

    def _start_call(self, call: PendingCall) -> None:
        if call.started:
            return
        call.id = call.id or self._new_id()
        call.started = True
        self._tools_called = True
        self._emit(ToolCallStart(call.id, call.name))

    def _end_call(
        self,
        call: PendingCall,
        *,
        cut_off: bool = False,
        arguments: JsonObject | None = None,
        signature: str = "",
    ) -> None:
        if call.ended:
            return
        self._start_call(call)
        call.ended = True
        raw = "".join(call.parts)
        parsed = arguments if arguments is not None else parse_arguments(raw)
        if parsed is None:
            info = bad_tool_arguments(self._ctx, call.name, call.id, raw, cut_off=cut_off)
            self._emit(StreamError(info, final=False, call_id=call.id, call_name=call.name))
            return
        self._emit(ToolCallEnd(call.id, call.name, parsed, signature))


class SSEParser(ParserBase):
    """Base for SSE protocols; also accepts a body that is one JSON document (non-streamed)."""

    data_fields: ClassVar[frozenset[str]] = frozenset()

    def __init__(
        self, *, context: ErrorContext | None = None, new_id: IdFactory = new_tool_call_id
    ) -> None:
        """Create a parser; ``context`` names the provider in messages."""
        super().__init__(context=context, new_id=new_id)
        self._sse = SSEDecoder(data_fields=self.data_fields)
        self._json: JsonElementDecoder | None = None
        self._sniffed = False

    def _decode(self, data: bytes) -> None:
        if not self._sniffed:
            stripped = data.lstrip()
            if not stripped:
                return
            self._sniffed = True
            if stripped[:1] in (b"{", b"["):
                self._json = JsonElementDecoder()
            data = stripped
        if self._json is not None:
            for element in self._json.feed(data):
                self._on_element(element)
                if self._ended:
                    return
            if self._json.broken:
                self._fail(unreadable_event(self._ctx, data[:200].decode("utf-8", "replace")))
            return
        for event in self._sse.feed(data):
            self._on_sse(event)
            if self._ended:
                return

    def _flush(self) -> None:
        if self._json is not None:
            return
        for event in self._sse.close():
            self._on_sse(event, at_eof=True)
            if self._ended:
                return

    def _on_sse(self, event: ServerSentEvent, *, at_eof: bool = False) -> None:
        if event.data.strip() == "[DONE]":
            self._on_done()
            return
        try:
            payload = json.loads(event.data)
        except ValueError:
            # An unterminated event at EOF that does not parse was cut, not malformed.
            cut = stream_cut(self._ctx, self.terminal_marker) if at_eof else None
            self._fail(cut or unreadable_event(self._ctx, event.data))
            return
        if not isinstance(payload, dict):
            self._fail(unreadable_event(self._ctx, event.data))
            return
        self._on_payload(event.event, payload)

    def _on_element(self, raw: bytes) -> None:
        text = raw.decode("utf-8", errors="replace")
        try:
            payload = json.loads(text)
        except ValueError:
            self._fail(unreadable_event(self._ctx, text))
            return
        self._on_document(obj(payload) if isinstance(payload, dict) else {"_": payload})

    def _on_done(self) -> None:
        """Handle ``data: [DONE]``; protocols without it ignore a stray one."""

    def _on_payload(self, event: str, payload: JsonObject) -> None:
        raise NotImplementedError

    def _on_document(self, payload: JsonObject) -> None:
        """Handle a body that was one JSON document instead of a stream."""
        if classify_stream_error(payload, self._ctx) is not None:
            self._fail_with_payload(payload)
            return
        self._fail(
            ErrorInfo(
                category=ErrorCategory.CONFIG,
                message=f"{self._ctx.subject} answered with one JSON document instead of a "
                'stream. Make sure the agent\'s body sets "stream": true.',
                provider_detail=json.dumps(payload)[:2000],
            )
        )


class NDJSONParser(ParserBase):
    """Base for newline-delimited JSON protocols: one object per line, ``error`` checked first."""

    def __init__(
        self, *, context: ErrorContext | None = None, new_id: IdFactory = new_tool_call_id
    ) -> None:
        """Create a parser; ``context`` names the provider in messages."""
        super().__init__(context=context, new_id=new_id)
        self._lines = NDJSONDecoder()

    def _decode(self, data: bytes) -> None:
        for line in self._lines.feed(data):
            self._on_line(line)
            if self._ended:
                return

    def _flush(self) -> None:
        for line in self._lines.close():
            self._on_line(line, at_eof=True)

    def _on_line(self, line: bytes, *, at_eof: bool = False) -> None:
        text = line.decode("utf-8", errors="replace")
        try:
            payload = json.loads(text)
        except ValueError:
            cut = stream_cut(self._ctx, self.terminal_marker) if at_eof else None
            self._fail(cut or unreadable_event(self._ctx, text))
            return
        if not isinstance(payload, dict):
            self._fail(unreadable_event(self._ctx, text))
            return
        if payload.get("error"):
            self._fail_with_payload(payload)
            return
        self._on_payload(payload)

    def _on_payload(self, payload: JsonObject) -> None:
        raise NotImplementedError
