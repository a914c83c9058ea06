"""Converting positions between the client's encoding and code points, one line at a time.

pygls converts through the whole document's line list, which it rebuilds on every call, and
counts code units one character at a time in Python; on a large file that was the most
expensive part of a completion request. Only the cursor's line is converted here, an ASCII
line (almost every line of code) needs no conversion at all, and other lines are measured by
encoding them, at C speed.
"""

from __future__ import annotations

from pygls.workspace.position_codec import PositionCodec

from qodeassist_lsp.context.documents import has_line, line_start_offset
from qodeassist_lsp.lsp.errors import InvalidParams

_CODECS = {"utf-8": ("utf-8", 1), "utf-16": ("utf-16-le", 2)}
"""Position encodings that differ from code points: the Python codec and bytes per unit."""


def line_at(text: str, line: int) -> tuple[int, str]:
    """Return the offset where ``line`` starts and its text (without the line break)."""
    start = line_start_offset(text, line)
    end = text.find("\n", start)
    return start, text[start : len(text) if end < 0 else end]


def require_line(method: str, uri: str, text: str, line: int) -> None:
    """Raise ``InvalidParams`` (-32602) when the document ``uri`` has no ``line``.

    A column past a line's end is clamped, as LSP says; a line past the document's end has no
    meaning, and answering it would put text where the user never was.
    """
    if not has_line(text, line):
        lines = text.count("\n") + 1
        raise InvalidParams(
            f"{method}: line {line} is past the end of {uri}, which has {lines} "
            f"line{'s' if lines != 1 else ''} (lines count from 0)"
        )


def _codec_of(codec: PositionCodec) -> tuple[str, int] | None:
    kind = codec.encoding or "utf-16"
    return _CODECS.get(str(getattr(kind, "value", kind)))


def units(codec: PositionCodec, text: str) -> int:
    """Return the length of ``text`` in the client's position units."""
    encoding = _codec_of(codec)
    if encoding is None or text.isascii():
        return len(text)
    name, width = encoding
    return len(text.encode(name, "surrogatepass")) // width


def to_code_points(codec: PositionCodec, line_text: str, column: int) -> int:
    """Return the code-point column of the client ``column`` on ``line_text``, clamped.

    A column inside a character's code units (half a surrogate pair) rounds up past it.
    """
    if column <= 0:
        return 0
    encoding = _codec_of(codec)
    if encoding is None or line_text.isascii():
        return min(column, len(line_text))
    name, width = encoding
    counted = 0
    for index, char in enumerate(line_text):
        if counted >= column:
            return index
        counted += 1 if char.isascii() else len(char.encode(name, "surrogatepass")) // width
    return len(line_text)


def to_client_units(codec: PositionCodec, line_text: str, character: int) -> int:
    """Return the client column of the code-point ``character`` on ``line_text``."""
    return units(codec, line_text[: max(0, character)])
