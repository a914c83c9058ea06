r"""An incremental, sans-I/O Server-Sent Events decoder.

Bytes go in as they arrive, complete events come out. This is our own small decoder rather
than httpx-sse because httpx-sse only decodes lines pulled from an httpx response (its
incremental pieces are private), and it drops unknown fields, while llama.cpp's older
servers report mid-stream failures on a non-standard ``error:`` field that must survive.

Follows WHATWG SSE: CR, LF and CRLF all end a line (a CR at a chunk edge waits for the next
chunk), ``data:`` loses one leading space, several ``data:`` lines join with ``\\n``, lines
starting with ``:`` are comments, ``id`` and ``retry`` are ignored (no stream is resumed), a
blank line dispatches. UTF-8 is decoded incrementally (a character split across chunks is
fine; invalid bytes become U+FFFD). At EOF a pending event with data is dispatched even without
its blank line. ``[DONE]`` is left to callers.
"""

from __future__ import annotations

import codecs
from collections.abc import Collection
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ServerSentEvent:
    """One dispatched event; ``event`` is empty for the default "message" type."""

    event: str = ""
    data: str = ""


class SSEDecoder:
    """Feeds bytes, returns complete `ServerSentEvent` objects."""

    def __init__(self, *, data_fields: Collection[str] = ()) -> None:
        """Create a decoder; each of ``data_fields`` acts like ``data`` and names the event."""
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._data_fields = frozenset(data_fields)
        self._partial: list[str] = []
        self._trailing_cr = False
        self._at_start = True
        self._event = ""
        self._data: list[str] = []

    def feed(self, data: bytes) -> list[ServerSentEvent]:
        """Decode ``data`` and return the events it completed."""
        return self._feed_text(self._utf8.decode(data))

    def close(self) -> list[ServerSentEvent]:
        """Flush at EOF: finish the last line and dispatch a pending event."""
        out = self._feed_text(self._utf8.decode(b"", final=True))
        if self._trailing_cr or self._partial:
            self._line("".join(self._partial), out)
        self._partial = []
        self._trailing_cr = False
        self._dispatch(out)
        return out

    def _feed_text(self, text: str) -> list[ServerSentEvent]:
        out: list[ServerSentEvent] = []
        if self._at_start and text:
            self._at_start = False
            text = text.removeprefix("\ufeff")
        if self._trailing_cr:
            text = "\r" + text
            self._trailing_cr = False
        if text.endswith("\r"):
            # It may be the first half of a CRLF that the next chunk completes.
            self._trailing_cr = True
            text = text[:-1]
        if not text:
            return out
        if "\n" not in text and "\r" not in text:
            self._partial.append(text)
            return out
        lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        lines[0] = "".join(self._partial) + lines[0]
        rest = lines.pop()
        self._partial = [rest] if rest else []
        for line in lines:
            self._line(line, out)
        return out

    def _line(self, line: str, out: list[ServerSentEvent]) -> None:
        if not line:
            self._dispatch(out)
            return
        if line.startswith(":"):
            return
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name in self._data_fields:
            self._event = name
            self._data.append(value)

    def _dispatch(self, out: list[ServerSentEvent]) -> None:
        if self._data:
            out.append(ServerSentEvent(self._event, "\n".join(self._data)))
        self._data = []
        self._event = ""
