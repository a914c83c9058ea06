r"""An incremental, sans-I/O newline-delimited JSON line splitter (Ollama's stream format).

Splits on the byte ``\\n`` only. ``httpx.Response.aiter_lines`` is not used because it also
splits on U+0085, U+2028 and U+2029, which JSON strings may carry unescaped.
"""

from __future__ import annotations


class NDJSONDecoder:
    """Feeds bytes, returns complete non-blank lines (without their line ending)."""

    def __init__(self) -> None:
        self._partial: list[bytes] = []

    def feed(self, data: bytes) -> list[bytes]:
        """Return the lines ``data`` completed; the tail waits for more bytes."""
        if b"\n" not in data:
            if data:
                self._partial.append(data)
            return []
        pieces = data.split(b"\n")
        pieces[0] = b"".join(self._partial) + pieces[0]
        tail = pieces.pop()
        self._partial = [tail] if tail else []
        return [line for piece in pieces if (line := piece.strip())]

    def close(self) -> list[bytes]:
        """Return the last line if the stream ended without a final newline."""
        line = b"".join(self._partial).strip()
        self._partial = []
        return [line] if line else []
