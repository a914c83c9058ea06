"""An incremental, sans-I/O splitter for one streamed JSON document.

Gemini without ``?alt=sse`` streams a single JSON array a piece at a time; each element is a
complete response chunk and should be handled as soon as it closes, long before the array
does. A body that is a single object (a non-streamed reply or an error envelope sent with
status 200) comes out as one element. The scanner tracks depth and string/escape state on
bytes; structural characters are ASCII, so UTF-8 sequences can never be mistaken for them.
"""

from __future__ import annotations

import enum
import re

_WHITESPACE = b" \t\r\n"
_STRUCTURAL = re.compile(rb'[\[\]{}"]')
_STRING_STOP = re.compile(rb'["\\]')
_SCALAR_END = re.compile(rb"[,\]\s]")


class _Mode(enum.Enum):
    START = enum.auto()
    ARRAY = enum.auto()
    OBJECT = enum.auto()
    DONE = enum.auto()
    BROKEN = enum.auto()


class JsonElementDecoder:
    """Feeds bytes, returns each complete top-level array element (or the lone object)."""

    def __init__(self) -> None:
        self._mode = _Mode.START
        self._buffer = bytearray()
        self._active = False
        self._scalar = False
        self._depth = 0
        self._in_string = False
        self._escape = False

    @property
    def complete(self) -> bool:
        """Whether the whole document (closing ``]`` or the lone object) has arrived."""
        return self._mode is _Mode.DONE

    @property
    def broken(self) -> bool:
        """Whether the body is not a JSON array or object at all."""
        return self._mode is _Mode.BROKEN

    def feed(self, data: bytes) -> list[bytes]:
        """Scan ``data`` and return the elements it completed."""
        out: list[bytes] = []
        i, size = 0, len(data)
        while i < size and self._mode not in (_Mode.DONE, _Mode.BROKEN):
            if self._active:
                i = self._scan(data, i, out)
                continue
            byte = data[i : i + 1]
            if byte in _WHITESPACE or (byte == b"\xef" and self._mode is _Mode.START):
                i += 1
            elif self._mode is _Mode.START:
                if byte == b"[":
                    self._mode = _Mode.ARRAY
                    i += 1
                elif byte == b"{":
                    self._mode = _Mode.OBJECT
                    self._begin(byte)
                elif byte in (b"\xbb", b"\xbf"):
                    i += 1  # the rest of a UTF-8 byte order mark
                else:
                    self._mode = _Mode.BROKEN
            elif byte == b",":
                i += 1
            elif byte == b"]":
                self._mode = _Mode.DONE
                i += 1
            else:
                self._begin(byte)
        return out

    def _begin(self, byte: bytes) -> None:
        self._active = True
        self._depth = 0
        self._scalar = byte not in (b"{", b"[", b'"')

    def _finish(self, out: list[bytes]) -> None:
        out.append(bytes(self._buffer))
        self._buffer.clear()
        self._active = False
        if self._mode is _Mode.OBJECT:
            self._mode = _Mode.DONE

    def _scan(self, data: bytes, i: int, out: list[bytes]) -> int:
        start, size = i, len(data)
        while i < size:
            if self._in_string:
                if self._escape:
                    self._escape = False
                    i += 1
                    continue
                match = _STRING_STOP.search(data, i)
                if match is None:
                    i = size
                    break
                i = match.end()
                if data[match.start()] == 0x5C:  # backslash
                    self._escape = True
                    continue
                self._in_string = False
                if self._depth == 0:
                    self._buffer += data[start:i]
                    self._finish(out)
                    return i
                continue
            if self._scalar:
                match = _SCALAR_END.search(data, i)
                if match is None:
                    i = size
                    break
                i = match.start()
                self._buffer += data[start:i]
                self._finish(out)
                return i
            match = _STRUCTURAL.search(data, i)
            if match is None:
                i = size
                break
            i = match.end()
            char = data[match.start()]
            if char == 0x22:  # quote
                self._in_string = True
            elif char in (0x5B, 0x7B):  # [ {
                self._depth += 1
            else:
                self._depth -= 1
                if self._depth <= 0:
                    self._buffer += data[start:i]
                    self._finish(out)
                    return i
        self._buffer += data[start:i]
        return i
