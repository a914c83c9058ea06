"""An incremental, sans-I/O splitter for one streamed JSON document.

Gemini without ``?alt=sse`` streams a single JSON array a piece at a time; each element is a
complete response chunk and should be handled as soon as it closes, long before the array
does. A body that is a single object (a non-streamed reply or an error envelope sent with
status 200) comes out as one element. Elements are found by matching brackets outside strings
on bytes; structural characters are ASCII, so UTF-8 sequences can never be mistaken for them.
"""

from __future__ import annotations

import re

# A string (group 1 is its closing quote, None while it is still arriving) or a bracket.
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(")?|[\[\]{}]', re.S)
_SCALAR_END = re.compile(rb"[,\]\s]")


class JsonElementDecoder:
    """Feeds bytes, returns each complete top-level array element (or the lone object)."""

    def __init__(self) -> None:
        self._buffer = b""
        self._in_array = False
        self._resume = (0, 0)  # where scanning the open element goes on, and its depth there
        self.complete = False
        """Whether the whole document (closing ``]`` or the lone object) has arrived."""
        self.broken = False
        """Whether the body is not a JSON array or object at all."""

    def feed(self, data: bytes) -> list[bytes]:
        """Scan ``data`` and return the elements it completed."""
        out: list[bytes] = []
        if self.complete or self.broken:
            return out
        self._buffer += data
        while not (self.complete or self.broken) and (element := self._next()) is not None:
            out.append(element)
        return out

    def _next(self) -> bytes | None:
        # Between elements: whitespace, the commas of an array, a byte order mark at the start.
        self._buffer = self._buffer.lstrip(
            b" \t\r\n," if self._in_array else b" \t\r\n\xef\xbb\xbf"
        )
        first = self._buffer[:1]
        if not first:
            return None
        if not self._in_array and first == b"[":
            self._in_array = True
            self._buffer = self._buffer[1:]
            return self._next()
        if not self._in_array and first != b"{":
            self.broken = True
            return None
        if first == b"]":
            self.complete = True
            return None
        end = self._end()
        if end is None:
            return None
        element, self._buffer, self._resume = self._buffer[:end], self._buffer[end:], (0, 0)
        self.complete = not self._in_array
        return element

    def _end(self) -> int | None:
        """Where the element at the start of the buffer ends; None until it has all arrived."""
        if self._buffer[:1] not in (b"{", b"[", b'"'):
            scalar = _SCALAR_END.search(self._buffer)
            return scalar.start() if scalar else None
        position, depth = self._resume
        for token in _TOKEN.finditer(self._buffer, position):
            if token[0][:1] != b'"':
                depth += 1 if token[0] in (b"[", b"{") else -1
            elif token[1] is None:
                break  # a string cut off at the end of what has arrived
            if depth <= 0:
                return token.end()
            position = token.end()
        self._resume = (position, depth)
        return None
